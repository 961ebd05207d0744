"""The server's own housekeeping waits for a pause in the client's requests (idle_work): the
cyclic collector's passes, and freeing a closed document's objects. Read from the spans the
real server process writes when ``WORKRAIL_LSP_TRACE`` names a file."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from raw_lsp import SERVER, RawLspServer, frame
from test_lsp_large_documents import _many_steps

from workrail_lsp.idle_work import MAX_DISCARDED
from workrail_lsp.tracing import ENVIRONMENT_VARIABLE

STEPS = 6_000  # parsed and checked, keeps well over 50,000 containers alive (the old threshold)


def _spans(trace: Path) -> list[dict[str, Any]]:
    if not trace.exists():
        return []
    return [json.loads(line) for line in trace.read_text().splitlines() if line.endswith("}")]


def _inside(inner: dict[str, Any], outer: dict[str, Any]) -> bool:
    return outer["began"] <= inner["began"] and inner["ended"] <= outer["ended"]


def _traced(tmp_path: Path) -> tuple[RawLspServer, Path, Path]:
    root = tmp_path / "ws"
    (root / "workflows").mkdir(parents=True)
    trace = tmp_path / "trace.jsonl"
    server = RawLspServer(root, command=["env", f"{ENVIRONMENT_VARIABLE}={trace}", *SERVER])
    server.initialize({"textDocument": {"diagnostic": {}}})
    return server, root, trace


def _wait_for_idle_work(trace: Path) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        found = [s for s in _spans(trace) if s["name"] == "idle" and s["discarded"]]
        if found:
            return found[0]
        assert time.monotonic() < deadline, "no idle work"
        time.sleep(0.05)


def test_collection_and_freeing_wait_for_a_pause(tmp_path):
    server, root, trace = _traced(tmp_path)
    try:
        # The first one is diagnosed before pygls loads (the fast start), not by the server.
        first = server.open(root / "workflows" / "first.json", _many_steps(1))
        server.call("textDocument/diagnostic", {"textDocument": {"uri": first}}, 60)
        uri = server.open(root / "workflows" / "many.json", _many_steps(STEPS))
        answer = server.call("textDocument/diagnostic", {"textDocument": {"uri": uri}}, 60)
        assert answer["result"]["kind"] == "full"
        server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        _wait_for_idle_work(trace)
    finally:
        server.close()
    spans = _spans(trace)
    exit_at = next(s["began"] for s in spans if s.get("method") == "exit")
    spans = [s for s in spans if s["ended"] < exit_at]  # not the interpreter's own at exit
    requests = [s for s in spans if s["name"] in ("handle", "pull")]
    passes = [s for s in spans if s["name"] == "gc"]
    idle = [s for s in spans if s["name"] == "idle"]
    assert passes, "the document allocated too little for a collection: the test shows nothing"
    assert [p for p in passes if any(_inside(p, r) for r in requests)] == []
    assert all(any(_inside(p, i) for i in idle) for p in passes)
    closed = next(s for s in requests if s.get("method") == "textDocument/didClose")
    assert any(i["discarded"] and i["began"] >= closed["ended"] for i in idle)


def test_a_burst_of_edits_without_a_pause_holds_few_versions(tmp_path):
    server, root, trace = _traced(tmp_path)
    try:
        uri = server.open(root / "workflows" / "few.json", _many_steps(20))
        server.call("textDocument/diagnostic", {"textDocument": {"uri": uri}}, 60)
        at = {"line": 1, "character": 2}
        edits = [
            frame(
                {
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": version},
                        "contentChanges": [{"range": {"start": at, "end": at}, "text": " "}],
                    },
                }
            )
            for version in range(2, 62)
        ]
        server.process.stdin.write(b"".join(edits))  # one write: no pause between them
        server.process.stdin.flush()
        held = _wait_for_idle_work(trace)["discarded"]
    finally:
        server.close()
    assert 0 < held <= MAX_DISCARDED
