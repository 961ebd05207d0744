"""Benchmark: what one large document (under the 5 MiB limit) costs the language server per request.

    python bench/lsp_large_document.py [--earlier DIR] [--shape steps|arrays]

Starts ``python -m workrail_lsp`` (and, with ``--earlier``, that checkout's), opens one document
of the shape asked for (``steps``: 12,000 steps of ~400 bytes, 4.8 MiB; ``arrays``: 20,000 steps
with five one-item arrays each, 3.6 MiB), and times each request from sending it to its answer:
pulled diagnostics, the outline twice (the second reuses the first's symbols), folding, semantic
tokens, code lens, document links, inlay hints for the first 200 lines (what an editor shows) and
for the whole document, a hover. Prints the answers' sizes and the server's peak resident memory
(VmHWM) at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_startup import _frame, _read, spawn  # noqa: E402 - the same framing and start


def document(shape: str) -> str:
    if shape == "steps":
        step = {
            "id": "s",
            "title": "A step",
            "prompt": "x" * 200,
            "guidance": ["a", "b"],
            "runCondition": {"var": "mode", "equals": "fast"},
        }
        steps = [dict(step, id=f"step-{i}") for i in range(12_000)]
        return json.dumps({"id": "huge", "name": "Huge", "steps": steps}, indent=2)
    steps = [
        {"id": f"step-{i}", "title": "t", "prompt": "p", "guidance": [[1], [2], [3], [4], [5]]}
        for i in range(20_000)
    ]
    return json.dumps({"id": "huge", "name": "Huge", "steps": steps}, indent=1)


class Server:
    def __init__(self, root: Path, code: Path | None) -> None:
        self.process = spawn([sys.executable, "-m", "workrail_lsp"], code)
        self.next_id = 0
        self.call(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {"textDocument": {"diagnostic": {}}},
            },
        )
        self.notify("initialized", {})

    def notify(self, method: str, params: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(_frame({"jsonrpc": "2.0", "method": method, "params": params}))
        self.process.stdin.flush()

    def call(self, method: str, params: dict) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.next_id += 1
        self.process.stdin.write(
            _frame({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        )
        self.process.stdin.flush()
        while True:
            message = _read(self.process.stdout)
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def peak_memory_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")


def measure(shape: str, code: Path | None) -> None:
    text = document(shape)
    with tempfile.TemporaryDirectory(prefix="workrail-bench-") as folder:
        root = Path(folder)
        (root / "workflows").mkdir()
        path = root / "workflows" / "huge.json"
        server = Server(root, code)
        uri = path.as_uri()
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": text}},
        )
        ident = {"textDocument": {"uri": uri}}
        lines = text.count("\n")
        requests = [
            ("diagnostics (pull)", "textDocument/diagnostic", ident),
            ("outline", "textDocument/documentSymbol", ident),
            ("outline again", "textDocument/documentSymbol", ident),
            ("folding", "textDocument/foldingRange", ident),
            ("semantic tokens", "textDocument/semanticTokens/full", ident),
            ("code lens", "textDocument/codeLens", ident),
            ("document links", "textDocument/documentLink", ident),
            (
                "inlay hints, 200 lines",
                "textDocument/inlayHint",
                {**ident, "range": _lines(0, 200)},
            ),
            (
                "inlay hints, next 200",
                "textDocument/inlayHint",
                {**ident, "range": _lines(200, 400)},
            ),
            ("inlay hints, whole", "textDocument/inlayHint", {**ident, "range": _lines(0, lines)}),
            ("hover", "textDocument/hover", {**ident, "position": {"line": 5, "character": 8}}),
        ]
        print(
            f"{'checkout ' + str(code) if code else 'this checkout'}: {shape}, "
            f"{len(text.encode()) / 1048576:.2f} MiB, {lines:,} lines; "
            f"load average {os.getloadavg()[0]:.2f}\n"
        )
        print("| request | time | answer |\n|---|---|---|")
        for name, method, params in requests:
            began = time.perf_counter()
            answer = server.call(method, params)
            took = (time.perf_counter() - began) * 1000
            size = len(json.dumps(answer.get("result"))) / 1_000_000
            print(f"| {name} | {took:.0f} ms | {size:.1f} MB |")
        print(f"\npeak resident memory: {server.peak_memory_mib():.0f} MiB\n")
        server.process.kill()
        server.process.wait()


def _lines(first: int, last: int) -> dict:
    return {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--earlier", type=Path, help="a checkout of an earlier commit to compare")
    parser.add_argument("--shape", choices=["steps", "arrays"], default="steps")
    arguments = parser.parse_args()
    measure(arguments.shape, None)
    if arguments.earlier is not None:
        measure(arguments.shape, arguments.earlier.resolve())
