"""Benchmark: the per-document costs of the language server (re-parse, lint, spans), on the 1 MB workflow.

    python bench/lsp_document_costs.py [--runs 15]

1. A one-character incremental change applied to the language server's copy of the text:
   pygls's ``TextDocument`` (rewrites every line) vs ``workrail_lsp.text_documents``'s
   ``EditedTextDocument`` (bisects a line index and splices).
2. Parse + lint of the document while 16 earlier ones are held (an editor with files open), in a
   fresh process per setting: CPython's default young-generation threshold (700) vs the
   language server's (``workrail_lsp.__main__.YOUNG_GENERATION_THRESHOLD``).
3. Two whole-text scans of the parse: the line starts (``LineIndex``) and the lone-surrogate check,
   against the character-class search it replaced.

Prints medians (and the worst run for 2), in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_vs_json_ls import big_workflow  # noqa: E402 - the same 1 MB document


def _median_ms(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def incremental_change(text: str, runs: int) -> dict[str, float]:
    from lsprotocol import types
    from pygls.workspace import TextDocument

    from workrail_engine.text.document import LineIndex
    from workrail_lsp.text_documents import EditedTextDocument

    line, column = LineIndex(text).position(text.index("list the risks", len(text) // 2))
    at = types.Position(line, column)
    insert = types.TextDocumentContentChangePartial(range=types.Range(at, at), text="x")
    after = types.Position(line, column + 1)
    delete = types.TextDocumentContentChangePartial(range=types.Range(at, after), text="")
    figures = {}
    for name, kind in (
        ("pygls TextDocument", TextDocument),
        ("EditedTextDocument", EditedTextDocument),
    ):
        document = kind("file:///big.json", text)
        document.apply_change(insert)  # the first change of ours builds the line index
        document.apply_change(delete)
        changes = iter([insert, delete] * runs)
        apply = document.apply_change
        figures[name] = _median_ms(
            lambda apply=apply, changes=changes: apply(next(changes)), 2 * runs
        )
        assert document.source == text
    return figures


HELD = 16
_PARSE_AND_LINT = """
import gc, json, statistics, sys, time
sys.path.insert(0, {bench!r})
from lsp_vs_json_ls import big_workflow
from workrail_engine.text.document import parse_document
from workrail_engine.lint import lint_document
gc.set_threshold({threshold})
text, held, times = big_workflow(), [], []
for n in range({count}):
    began = time.perf_counter()
    document = parse_document(text, f"/tmp/bench/workflows/{{n}}.json")
    held.append((document, lint_document(document)))
    times.append(time.perf_counter() - began)
print(json.dumps([statistics.median(times) * 1000, max(times) * 1000]))
"""


def parse_and_lint_held(threshold: int) -> tuple[float, float]:
    code = _PARSE_AND_LINT.format(
        bench=str(Path(__file__).resolve().parent), threshold=threshold, count=HELD
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    median, worst = json.loads(run.stdout)
    return median, worst


def whole_text_scans(text: str, runs: int) -> dict[str, float]:
    from workrail_engine.text.document import LineIndex
    from workrail_engine.text.syntax_problems import RAW_SURROGATE, has_raw_surrogate

    accented = text.replace("careful", "cäreful")  # not ASCII: the UTF-8 encode runs
    crlf = text.replace("\n", "\r\n")
    return {
        "LineIndex(text)": _median_ms(lambda: LineIndex(text), runs),
        "LineIndex, the same text with CRLF (the regex, as before for every text)": _median_ms(
            lambda: LineIndex(crlf), runs
        ),
        "lone-surrogate check, ASCII text (isascii)": _median_ms(
            lambda: has_raw_surrogate(text), runs
        ),
        "lone-surrogate check, accented text (UTF-8 encode)": _median_ms(
            lambda: has_raw_surrogate(accented), runs
        ),
        "lone-surrogate check, accented text (character-class search, before)": _median_ms(
            lambda: RAW_SURROGATE.search(accented), runs
        ),
    }


def main(runs: int) -> None:
    from workrail_lsp.__main__ import YOUNG_GENERATION_THRESHOLD

    text = big_workflow()
    print(f"document: {len(text.encode()) / 1e6:.2f} MB; runs: {runs}\n")
    print("| one-character change applied by | median |\n|---|---|")
    for name, ms in incremental_change(text, runs).items():
        print(f"| {name} | {ms:.2f} ms |")
    print(
        f"\n| parse + lint with {HELD} documents held, young-generation threshold | median | worst |"
    )
    print("|---|---|---|")
    for threshold in (700, YOUNG_GENERATION_THRESHOLD):
        median, worst = parse_and_lint_held(threshold)
        print(f"| {threshold:,} | {median:.1f} ms | {worst:.1f} ms |")
    print("\n| whole-text scan | median |\n|---|---|")
    for name, ms in whole_text_scans(text, runs).items():
        print(f"| {name} | {ms:.2f} ms |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    main(parser.parse_args().runs)
