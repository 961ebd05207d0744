"""Requests the protocol's types cannot hold get −32602, never silence (raw frames, real server)."""

from __future__ import annotations

import json

import pytest
from raw_lsp import RawLspServer

pytestmark = pytest.mark.slow

WORKFLOW = {"id": "flow", "name": "Flow", "steps": [{"id": "a", "title": "A", "prompt": "Do A."}]}


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "ws"
    (root / "workflows").mkdir(parents=True)
    lsp = RawLspServer(root)
    lsp.initialize()
    yield lsp
    assert lsp.close() == 0, lsp.stderr_text()[-2000:]
    assert lsp.not_json == []


BAD_POSITIONS = [
    {"line": -1, "character": 0},
    {"line": 2**31, "character": 0},
    {"line": "one", "character": 0},
    {"line": 0, "character": -1},
    {"line": 0, "character": 2**31},
    {"line": [1], "character": 0},
    {"line": None, "character": 0},
    {"line": 0},
    "here",
]


def test_positions_the_types_cannot_hold_are_invalid_params(server):
    uri = server.open(server.root / "workflows" / "flow.json", json.dumps(WORKFLOW, indent=2))
    for method in ("textDocument/hover", "textDocument/completion", "textDocument/definition"):
        for position in BAD_POSITIONS:
            params = {"textDocument": {"uri": uri}, "position": position}
            answer = server.call(method, params, timeout=10)
            assert answer.get("error", {}).get("code") == -32602, (method, position, answer)
            assert "position" in answer["error"]["message"], answer
    for params in ({"position": {"line": 0, "character": 0}}, {"textDocument": 5}, [1, 2]):
        answer = server.call("textDocument/hover", params, timeout=10)
        assert answer.get("error", {}).get("code") == -32602, (params, answer)
    # and the server still serves a request it can hold
    fine = server.call(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 4}},
    )
    assert "error" not in fine and fine["result"] is not None, fine
