"""Benchmark: workrail-lsp against vscode-json-language-server on a 1 MB workflow.

Same client driver (pygls), same schema, same document, pull diagnostics for both:
- didOpen → diagnostics: open a fresh URI, then pull; median over the runs;
- a one-character didChange → diagnostics: insert or delete one character in a prompt, then pull;
- completion at a key position inside a step near the end of the document.
Both servers run at once and take turns run by run, the order swapped every run, so that the
machine's load falls on both alike; each operation's p50 and p95 is printed, and our p95 against
theirs (the goal: ≤ 1.0× for open, change and completion).

    python bench/lsp_vs_json_ls.py [--runs 30] [--broken] [--inside] [--trace FILE]

The JSON server is installed from npm (vscode-langservers-extracted@4.10.0) into a cache folder
under /tmp the first time. Results are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from workrail_engine.lint import lint_text
from workrail_engine.schema import schema_path
from workrail_engine.text.document import LineIndex

JSON_LS_VERSION = "4.10.0"
JSON_LS_PREFIX = Path(f"/tmp/workrail-bench-json-ls-{JSON_LS_VERSION}")


def json_ls_command() -> list[str]:
    binary = JSON_LS_PREFIX / "node_modules" / ".bin" / "vscode-json-language-server"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("npm is needed to install vscode-langservers-extracted")
        subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(JSON_LS_PREFIX),
                "--no-audit",
                "--no-fund",
                f"vscode-langservers-extracted@{JSON_LS_VERSION}",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return [str(binary), "--stdio"]


def big_workflow() -> str:
    """≈1 MB, 2,800 steps of all kinds, six schema errors spread through the file."""
    steps: list[dict] = []
    for i in range(2800):
        step: dict = {
            "id": f"step-{i}",
            "title": f"Step {i}: review the module",
            "prompt": f"Review module {i}; compare with {{{{steps.step-{max(i - 1, 0)}.output}}}} and list the risks.",
            "agentRole": "You are a careful reviewer.",
            "guidance": ["Be specific", "Quote the code"],
            "runCondition": {"var": "scope", "equals": "full"},
        }
        if i % 10 == 5:
            step = {
                "id": f"step-{i}",
                "title": f"Test {i}",
                "run": {"command": ["pytest", "-q", f"tests/test_{i}.py"], "timeoutSeconds": 600},
                "onFailure": "abort",
            }
        steps.append(step)
    steps[100]["promt"] = steps[100].pop("prompt")  # unknown key + missing required
    steps[900]["onFailure"] = "abrt"  # enum value on a prompt step: unknown property
    steps[1505]["onFailure"] = "explode"  # bad enum on a command step
    steps[2000]["id"] = "Step_2000"  # id pattern
    steps[2400]["runCondition"] = {"var": "scope", "equal": "full"}  # unknown operator
    steps[2799]["guidance"] = "not a list"  # wrong type
    workflow = {
        "id": "big-review",
        "name": "Big review",
        "description": "Benchmark document",
        "version": "1.0.0",
        "steps": steps,
    }
    return json.dumps(workflow, indent=2)


class Driver:
    """A pygls client that answers what the servers ask (refresh, registrations, configuration)."""

    def __init__(self, command: list[str], name: str) -> None:
        self.command, self.name = command, name
        self.client = LanguageClient("bench-driver", "1")
        for method in (
            types.WORKSPACE_DIAGNOSTIC_REFRESH,
            types.CLIENT_REGISTER_CAPABILITY,
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
        ):
            self.client.feature(method)(lambda *args: None)
        self.client.feature(types.WORKSPACE_CONFIGURATION)(
            lambda params: [None for _ in params.items]
        )
        for method in (
            types.WINDOW_LOG_MESSAGE,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            types.WINDOW_SHOW_MESSAGE,
        ):
            self.client.feature(method)(lambda *args: None)
        self.version = 0

    async def start(self, root: Path) -> float:
        await self.client.start_io(*self.command)
        caps = types.ClientCapabilities(
            general=types.GeneralClientCapabilities(
                position_encodings=[types.PositionEncodingKind.Utf16]
            ),
            text_document=types.TextDocumentClientCapabilities(
                diagnostic=types.DiagnosticClientCapabilities(related_document_support=True),
                completion=types.CompletionClientCapabilities(
                    completion_item=types.ClientCompletionItemOptions(snippet_support=True)
                ),
                synchronization=types.TextDocumentSyncClientCapabilities(),
            ),
            workspace=types.WorkspaceClientCapabilities(
                configuration=True,
                diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
            ),
        )
        began = time.perf_counter()
        await self.client.initialize_async(
            types.InitializeParams(capabilities=caps, root_uri=root.as_uri(), process_id=None)
        )
        elapsed = time.perf_counter() - began
        self.client.initialized(types.InitializedParams())
        if "json" in self.name:
            settings = {
                "json": {
                    "validate": {"enable": True},
                    "schemas": [{"fileMatch": ["*.workflow.json"], "url": schema_path().as_uri()}],
                }
            }
            self.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings=settings)
            )
        return elapsed

    def open(self, uri: str, text: str) -> None:
        self.version += 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="json", version=self.version, text=text)
            )
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
        )

    def change(self, uri: str, at: types.Position, delete: bool, char: str = "x") -> None:
        self.version += 1
        end = types.Position(at.line, at.character + 1) if delete else at
        change = types.TextDocumentContentChangePartial(
            range=types.Range(at, end), text="" if delete else char
        )
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=self.version, uri=uri), [change]
            )
        )

    async def pull(self, uri: str) -> list[types.Diagnostic]:
        report = await self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
        )
        return list(getattr(report, "items", []) or [])

    async def outline(self, uri: str) -> int:
        result = await self.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
        )
        return len(result or [])

    async def complete(self, uri: str, at: types.Position) -> int:
        result = await self.client.text_document_completion_async(
            types.CompletionParams(types.TextDocumentIdentifier(uri), at)
        )
        items = result.items if isinstance(result, types.CompletionList) else (result or [])
        return len(items)

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 10)
            self.client.exit(None)
        finally:
            await self.client.stop()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


OPERATIONS = ("open", "change", "completion")


class Session:
    """One server's samples, taken one run at a time so that the two servers can take turns."""

    def __init__(self, driver: Driver, text: str, broken: bool) -> None:
        self.driver, self.broken = driver, broken
        index = LineIndex(text)
        self.text = text
        self.edit_at = types.Position(
            *index.position(text.index("list the risks", len(text) // 2), "utf-16")
        )
        key_line, key_col = index.position(text.rindex('"agentRole"'), "utf-16")
        self.key_at = types.Position(key_line, key_col)
        # The broken case: a half-typed key ("ag) on a new line before "agentRole" near the end.
        self.half_key = '"ag\n' + " " * key_col
        self.broken_key = types.Position(key_line, key_col + 3)
        self.samples: dict[str, list[float]] = {
            name: [] for name in (*OPERATIONS, "broken_outline", "broken_completion")
        }
        self.counts: set[int] = set()
        self.windows: list[tuple[str, float, float]] = []  # (operation, began, ended) kept

    async def run(self, root: Path, run: int) -> None:
        """Open a fresh URI, pull, outline, four edits, four completions, break it, close."""
        driver, keep = self.driver, run > 0  # the first run warms up (schema, caches): dropped

        def timed(name: str, began: float) -> None:
            if keep:
                ended = time.perf_counter()
                self.samples[name].append(ended - began)
                self.windows.append((name, began, ended))

        uri = (root / f"big-{run}.workflow.json").as_uri()
        began = time.perf_counter()
        driver.open(uri, self.text)
        self.counts.add(len(await driver.pull(uri)))
        timed("open", began)
        await driver.outline(uri)  # as an editor does on open (outline view, breadcrumbs)
        for step in range(4):
            began = time.perf_counter()
            driver.change(uri, self.edit_at, delete=bool(step % 2))
            await driver.pull(uri)
            timed("change", began)
        for _ in range(4):
            began = time.perf_counter()
            await driver.complete(uri, self.key_at)
            timed("completion", began)
        if self.broken:
            await self.break_document(uri, timed)
        driver.close(uri)

    async def break_document(self, uri: str, timed: Callable[[str, float], None]) -> None:
        driver = self.driver
        driver.change(uri, self.key_at, delete=False, char=self.half_key)
        await driver.pull(uri)
        for _ in range(4):
            began = time.perf_counter()
            symbols = await driver.outline(uri)
            timed("broken_outline", began)
            began = time.perf_counter()
            await driver.complete(uri, self.broken_key)
            timed("broken_completion", began)
        assert symbols, f"{driver.name}: no outline on the broken document"

    def figures(self) -> dict[str, float]:
        ms = 1000.0
        out = {"diagnostics": float(max(self.counts))}
        for name, values in self.samples.items():
            if not values:
                continue
            out[f"{name}_p50"] = statistics.median(values) * ms
            out[f"{name}_p95"] = percentile(values, 0.95) * ms
        return out


async def measure_side_by_side(
    servers: dict[str, list[str]], root: Path, text: str, runs: int, broken: bool
) -> tuple[dict[str, dict[str, float]], dict[str, Session]]:
    """Both servers up at once, taking turns run by run (the order swapped every run), so that
    the machine's load falls on both alike."""
    sessions = {
        name: Session(Driver(command, name), text, broken) for name, command in servers.items()
    }
    started = {name: await s.driver.start(root) for name, s in sessions.items()}
    try:
        for run in range(runs + 1):
            order = list(sessions.values())
            for session in order if run % 2 == 0 else reversed(order):
                await session.run(root, run)
            print(f"run {run} of {runs}", end="\r", file=sys.stderr, flush=True)
    finally:
        for session in sessions.values():
            await session.driver.stop()
    results = {}
    for name, session in sessions.items():
        results[name] = session.figures()
        results[name]["initialize"] = started[name] * 1000.0
    return results, sessions


def attribute(trace: Path, windows: list[tuple[str, float, float]]) -> None:
    """For each operation, where our server's time went in its slowest samples (those at or
    over its p90) against its typical ones (under the median), from the spans the server wrote
    (``WORKRAIL_LSP_TRACE``): the time each kind of span covers inside a sample's window, summed
    over the samples and divided by their count; "outside spans" is the rest of the window
    (transport, the client, the event loop between messages)."""
    spans = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]

    def covered(began: float, ended: float) -> dict[str, float]:
        parts: dict[str, list[tuple[float, float]]] = {}
        for s in spans:
            if s["ended"] <= began or s["began"] >= ended:
                continue
            name = s["name"] if s["name"] != "gc" else f"gc gen{s['generation']}"
            if s["name"] in ("handle", "send") and s.get("method"):
                name = f"{s['name']} {s['method']}"
            if s["name"] == "read":
                name = f"read {s['part']} ({s['thread']})"
            parts.setdefault(name, []).append((max(s["began"], began), min(s["ended"], ended)))
        out = {}
        for name, pieces in parts.items():  # nested spans of one name (re-entry) counted once
            pieces.sort()
            total, reach = 0.0, began
            for a, b in pieces:
                if b > reach:
                    total += b - max(a, reach)
                    reach = b
            out[name] = total
        return out

    for op in OPERATIONS:
        mine = [(b, e) for name, b, e in windows if name == op]
        durations = sorted(e - b for b, e in mine)
        median, p90 = durations[len(durations) // 2], percentile(durations, 0.9)
        groups = {
            f"slowest (≥ p90 {p90 * 1000:.0f} ms)": [w for w in mine if w[1] - w[0] >= p90],
            f"typical (< median {median * 1000:.0f} ms)": [w for w in mine if w[1] - w[0] < median],
        }
        print(f"\n{op}: mean ms per sample inside the sample's window")
        for label, group in groups.items():
            sums: dict[str, float] = {}
            for b, e in group:
                for name, value in covered(b, e).items():
                    sums[name] = sums.get(name, 0.0) + value
            total = sum(e - b for b, e in group) / len(group) * 1000
            parts = sorted(sums.items(), key=lambda kv: -kv[1])
            shown = ", ".join(f"{n} {v / len(group) * 1000:.1f}" for n, v in parts if v > 0.0002)
            print(f"  {label}, n={len(group)}, window {total:.1f}: {shown}")


def server_side(text: str, runs: int) -> dict[str, float]:
    """Our outline and completion on the broken document, timed inside the server's own code
    (the round trip above also counts the Python client decoding ~2,800 nested symbols)."""
    from pygls.workspace import TextDocument

    from workrail_lsp import completion, symbols
    from workrail_lsp.documents import DocumentStates

    index = LineIndex(text)
    key_line, key_col = index.position(text.rindex('"agentRole"'), "utf-16")
    outline, complete, change = [], [], []
    for run in range(runs + 1):
        states = DocumentStates()
        uri = f"file:///tmp/bench-{run}.workflow.json"
        document = TextDocument(uri, text, version=1)
        state = states.get(document)
        _ = state.diagnostics, state.tree.root  # open: diagnostics, then the primed tree
        symbols.document_symbols(state)  # the outline an editor shows on open
        edit = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(key_line, key_col), types.Position(key_line, key_col)),
            text='"ag\n' + " " * key_col,
        )
        began = time.perf_counter()
        edited = states.edited_document(uri, edit)
        document.apply_change(edit)
        document.version = 2
        state = states.get(document, edited)
        _ = state.diagnostics
        change.append(time.perf_counter() - began)
        for _ in range(4):
            began = time.perf_counter()
            symbols.document_symbols(state)
            outline.append(time.perf_counter() - began)
            began = time.perf_counter()
            completion.complete(state, types.Position(key_line, key_col + 3), True)
            complete.append(time.perf_counter() - began)
    ms = 1000.0
    return {
        "change_median": statistics.median(change[1:]) * ms,
        "outline_p95": percentile(outline[4:], 0.95) * ms,
        "completion_p95": percentile(complete[4:], 0.95) * ms,
    }


def print_report(
    text: str, engine_count: int, runs: int, results: dict[str, dict[str, float]]
) -> None:
    ours, theirs = results[OURS], results[THEIRS]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"document: {len(text) / 1e6:.2f} MB, 2,800 steps; engine diagnostics: {engine_count}; "
        f"runs: {runs}, alternating; load average before: {LOAD_BEFORE}, after: {load}\n"
    )
    print(
        "| server | initialize | open → diagnostics p50 / p95 | 1-char change → diagnostics "
        "p50 / p95 | completion p50 / p95 | diagnostics |"
    )
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        cells = " | ".join(f"{r[f'{op}_p50']:.1f} / {r[f'{op}_p95']:.1f} ms" for op in OPERATIONS)
        print(f"| {name} | {r['initialize']:.0f} ms | {cells} | {r['diagnostics']:.0f} |")
    if "broken_outline_p95" not in ours:
        print_ratios(ours, theirs)
        return
    print(
        "\nBroken document (a half-typed key near the end):\n\n"
        "| server | outline p95 | completion p95 at the half-typed key |\n|---|---|---|"
    )
    for name, r in results.items():
        print(
            f"| {name} | {r['broken_outline_p95']:.1f} ms | {r['broken_completion_p95']:.1f} ms |"
        )
    print_ratios(ours, theirs)


def print_ratios(ours: dict[str, float], theirs: dict[str, float]) -> None:
    print("\nratios, workrail / json (goal: p95 ≤ 1.00× for each):")
    for op in OPERATIONS:
        p50 = ours[f"{op}_p50"] / theirs[f"{op}_p50"]
        p95 = ours[f"{op}_p95"] / theirs[f"{op}_p95"]
        print(f"  {op:<10} p50 {p50:.2f}×  p95 {p95:.2f}×  {'met' if p95 <= 1.0 else 'NOT met'}")


async def main(runs: int, broken: bool, inside: bool, trace: Path | None) -> None:
    text = big_workflow()
    engine_count = len(
        lint_text(text, "big-0.workflow.json").diagnostics
    )  # the name the servers see first
    with tempfile.TemporaryDirectory() as folder:
        servers = {OURS: [sys.executable, "-m", "workrail_lsp"], THEIRS: json_ls_command()}
        if trace is not None:
            trace.unlink(missing_ok=True)
            servers[OURS] = ["env", f"WORKRAIL_LSP_TRACE={trace}", *servers[OURS]]
        results, sessions = await measure_side_by_side(servers, Path(folder), text, runs, broken)
    print_report(text, engine_count, runs, results)
    if trace is not None:
        attribute(trace, sessions[OURS].windows)
    if inside:
        figures = server_side(text, runs)
        print(
            f"\nworkrail-lsp, inside the server (no transport, no client decoding), broken "
            f"document: the edit that breaks it (re-parse + diagnostics) "
            f"{figures['change_median']:.0f} ms median, outline p95 {figures['outline_p95']:.1f} ms, "
            f"completion p95 {figures['completion_p95']:.1f} ms"
        )


OURS = "workrail-lsp"
THEIRS = f"vscode-json-language-server {JSON_LS_VERSION}"
LOAD_BEFORE = ", ".join(f"{x:.1f}" for x in os.getloadavg())

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--broken",
        action="store_true",
        help="also time the outline and completion of a broken document (a half-typed key)",
    )
    parser.add_argument(
        "--inside", action="store_true", help="also time our features inside the process"
    )
    parser.add_argument(
        "--trace",
        type=Path,
        help="have our server write its spans to this file (WORKRAIL_LSP_TRACE) and show where "
        "the time of its slowest samples went",
    )
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.broken, arguments.inside, arguments.trace))
