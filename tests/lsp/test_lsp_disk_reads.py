"""Files the client has not opened: only regular files are read, under a size cap, and nothing on
disk (a FIFO, /dev/zero, a symlink to it, a file too large) blocks the server or fills its memory.

Raw frames against the real server, run with a 1 GiB address-space limit so that a server that
reads without end fails here instead of taking the machine's memory.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from raw_lsp import RawLspServer

pytestmark = pytest.mark.slow

MEMORY_LIMIT = 1024**3
PEAK_MEMORY_BOUND = 300 * 1024**2  # the server itself peaks near 60 MB
ANSWER_SECONDS = 15


def workflow(workflow_id: str) -> str:
    steps = [{"id": "a", "title": "A", "prompt": "Do A."}]
    return json.dumps({"id": workflow_id, "name": "Flow", "steps": steps}, indent=2)


@pytest.fixture
def workspace(tmp_path):
    """flow.json and other.json share an id; beside them a FIFO, a symlink to /dev/zero and a
    6 MiB file, all named like workflows."""
    root = tmp_path / "ws"
    flows = root / "workflows"
    flows.mkdir(parents=True)
    (flows / "flow.json").write_text(workflow("flow"))
    (flows / "other.json").write_text(workflow("flow"))
    os.mkfifo(flows / "x.json")
    os.mkfifo(root / "pipe.workflow.json")
    (flows / "zero.json").symlink_to("/dev/zero")
    (flows / "big.json").write_text(json.dumps({"id": "big", "pad": "x" * (6 * 1024**2)}))
    return root


@pytest.fixture
def server(workspace):
    lsp = RawLspServer(workspace, memory_limit=MEMORY_LIMIT)
    lsp.initialize({"textDocument": {"diagnostic": {}}})  # pull diagnostics: a request to wait on
    yield lsp
    assert lsp.close() == 0, lsp.stderr_text()[-3000:]
    assert lsp.not_json == []


def hover(server: RawLspServer, uri: str, line: int = 1, character: int = 4) -> dict:
    params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
    return server.call("textDocument/hover", params, timeout=ANSWER_SECONDS)


def test_unopened_files_that_are_not_regular_or_too_large_are_not_read(server, workspace):
    for uri in (
        "file:///dev/zero",
        (workspace / "pipe.workflow.json").as_uri(),
        (workspace / "workflows" / "x.json").as_uri(),
        (workspace / "workflows" / "zero.json").as_uri(),
        (workspace / "workflows" / "big.json").as_uri(),
    ):
        answer = hover(server, uri)
        assert answer.get("result") is None and "error" not in answer, (uri, answer)
    assert server.peak_memory_bytes() < PEAK_MEMORY_BOUND
    # a regular file the client has not opened is still read
    answer = hover(server, (workspace / "workflows" / "other.json").as_uri())
    assert "id" in json.dumps(answer["result"]), answer


def test_fifos_and_devices_in_the_workspace_do_not_block_diagnostics(server, workspace):
    uri = server.open(workspace / "workflows" / "flow.json", workflow("flow"))
    deadline = time.monotonic() + ANSWER_SECONDS
    while True:  # the scan runs beside the first answers; a later pull has its findings
        report = server.call(
            "textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=ANSWER_SECONDS
        )
        codes = [item["code"] for item in report["result"]["items"]]
        if "WR603" in codes or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert "WR603" in codes, report  # the scan went past the FIFO and /dev/zero to other.json
    assert server.peak_memory_bytes() < PEAK_MEMORY_BOUND


def test_validate_workspace_reports_fifos_and_devices_instead_of_reading_them(server, workspace):
    answer = server.call(
        "workspace/executeCommand",
        {"command": "workrail.server.validateWorkspace", "arguments": []},
        timeout=ANSWER_SECONDS * 2,
    )
    results = {
        os.path.relpath(row["path"], workspace): [d["code"] for d in row["diagnostics"]]
        for row in answer["result"]["files"]
    }
    assert results["workflows/x.json"] == ["WR003"], results  # a FIFO
    assert results["workflows/zero.json"] == ["WR003"], results  # a device, through a symlink
    assert results["workflows/big.json"] == ["WR004"], results  # too large
    assert "WR603" in results["workflows/flow.json"], results
    assert server.peak_memory_bytes() < PEAK_MEMORY_BOUND
