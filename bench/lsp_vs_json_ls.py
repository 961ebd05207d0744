"""Benchmark: workrail-lsp against vscode-json-language-server on a 1 MB workflow.

Same client driver (pygls), same schema, same document, pull diagnostics for both:
- didOpen → diagnostics: open a fresh URI, then pull; median over the runs;
- a one-character didChange → diagnostics: insert or delete one character in a prompt, then pull;
- completion latency (p50/p95) at a key position inside a step near the end of the document.

    python bench/lsp_vs_json_ls.py [--runs 15]

The JSON server is installed from npm (vscode-langservers-extracted@4.10.0) into a cache folder
under /tmp the first time. Results are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
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


async def measure(driver: Driver, root: Path, text: str, runs: int) -> dict[str, float]:
    init = await driver.start(root)
    index = LineIndex(text)
    edit_line, edit_col = index.position(text.index("list the risks", len(text) // 2), "utf-16")
    key_at = text.rindex('"agentRole"')
    key_line, key_col = index.position(key_at, "utf-16")
    opened, changed, completions = [], [], []
    broken_outline, broken_completions = [], []
    counts = set()
    # The broken case: a half-typed key ("ag) on a new line before "agentRole" near the end.
    half_key = '"ag'
    typed_at = types.Position(key_line, key_col)
    broken_key = types.Position(key_line, key_col + len(half_key))
    for run in range(runs + 1):  # the first run warms up (schema loading, caches) and is dropped
        uri = (root / f"big-{run}.workflow.json").as_uri()
        began = time.perf_counter()
        driver.open(uri, text)
        counts.add(len(await driver.pull(uri)))
        if run:
            opened.append(time.perf_counter() - began)
        await driver.outline(uri)  # as an editor does on open (outline view, breadcrumbs)
        for step in range(4):
            began = time.perf_counter()
            driver.change(uri, types.Position(edit_line, edit_col), delete=bool(step % 2))
            await driver.pull(uri)
            if run:
                changed.append(time.perf_counter() - began)
        for _ in range(4):
            began = time.perf_counter()
            await driver.complete(uri, types.Position(key_line, key_col))
            if run:
                completions.append(time.perf_counter() - began)
        driver.change(uri, typed_at, delete=False, char=half_key + "\n" + " " * key_col)
        await driver.pull(uri)
        for _ in range(4):
            began = time.perf_counter()
            symbols = await driver.outline(uri)
            if run:
                broken_outline.append(time.perf_counter() - began)
            began = time.perf_counter()
            await driver.complete(uri, broken_key)
            if run:
                broken_completions.append(time.perf_counter() - began)
        assert symbols, f"{driver.name}: no outline on the broken document"
        driver.close(uri)
    await driver.stop()
    ms = 1000.0
    return {
        "initialize": init * ms,
        "open_median": statistics.median(opened) * ms,
        "change_median": statistics.median(changed) * ms,
        "completion_p50": statistics.median(completions) * ms,
        "completion_p95": percentile(completions, 0.95) * ms,
        "diagnostics": max(counts),
        "broken_outline_p95": percentile(broken_outline, 0.95) * ms,
        "broken_completion_p95": percentile(broken_completions, 0.95) * ms,
    }


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


async def main(runs: int) -> None:
    text = big_workflow()
    engine_count = len(
        lint_text(text, "big-0.workflow.json").diagnostics
    )  # the name the servers see first
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        servers = {
            "workrail-lsp": [sys.executable, "-m", "workrail_lsp"],
            f"vscode-json-language-server {JSON_LS_VERSION}": json_ls_command(),
        }
        for name, command in servers.items():
            results[name] = await measure(Driver(command, name), root, text, runs)
    ours, theirs = (
        results["workrail-lsp"],
        results[f"vscode-json-language-server {JSON_LS_VERSION}"],
    )
    print(
        f"document: {len(text) / 1e6:.2f} MB, 2,800 steps; engine diagnostics: {engine_count}; runs: {runs}\n"
    )
    print(
        "| server | initialize | didOpen → diagnostics (median) | 1-char didChange → diagnostics (median) | completion p50 | completion p95 | diagnostics |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(
            f"| {name} | {r['initialize']:.0f} ms | {r['open_median']:.0f} ms | {r['change_median']:.0f} ms "
            f"| {r['completion_p50']:.1f} ms | {r['completion_p95']:.1f} ms | {r['diagnostics']:.0f} |"
        )
    print(
        "\nBroken document (a half-typed key near the end):\n\n"
        "| server | outline p95 | completion p95 at the half-typed key |\n|---|---|---|"
    )
    for name, r in results.items():
        print(
            f"| {name} | {r['broken_outline_p95']:.1f} ms | {r['broken_completion_p95']:.1f} ms |"
        )
    inside = server_side(text, runs)
    print(
        f"\nworkrail-lsp, inside the server (no transport, no client decoding), broken document: "
        f"the edit that breaks it (re-parse + diagnostics) {inside['change_median']:.0f} ms median, "
        f"outline p95 {inside['outline_p95']:.1f} ms, completion p95 {inside['completion_p95']:.1f} ms"
    )
    print(
        f"\nratios (workrail / json): open {ours['open_median'] / theirs['open_median']:.2f}× (goal ≤ 0.5), "
        f"change {ours['change_median'] / theirs['change_median']:.2f}× (goal ≤ 0.25); "
        f"workrail completion p95 {ours['completion_p95']:.1f} ms (goal < 20), "
        f"broken outline p95 {ours['broken_outline_p95']:.1f} ms (goal < 100)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    asyncio.run(main(parser.parse_args().runs))
