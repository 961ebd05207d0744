"""Per-request work on a large document is bounded: folding and the outline
return at most a fixed number of items, outermost and first in the document first, through the
real server process."""

from __future__ import annotations

import json

from raw_lsp import RawLspServer

from workrail_lsp.folding import MAX_FOLDING_RANGES
from workrail_lsp.symbols import MAX_OUTLINE_SYMBOLS


def _many_steps(count: int) -> str:
    steps = [
        {"id": f"step-{i}", "title": "t", "prompt": "p", "guidance": ["a"]} for i in range(count)
    ]
    return json.dumps({"id": "many", "name": "Many", "steps": steps}, indent=2)


def _serve(tmp_path, capabilities):
    root = tmp_path / "ws"
    (root / "workflows").mkdir(parents=True)
    server = RawLspServer(root)
    server.initialize(capabilities)
    return server, root


def test_folding_stops_at_the_limit_outermost_first(tmp_path):
    count = MAX_FOLDING_RANGES + 1000  # each step and its guidance span lines: 2 folds a step
    server, root = _serve(tmp_path, {})
    try:
        uri = server.open(root / "workflows" / "many.json", _many_steps(count))
        answer = server.call("textDocument/foldingRange", {"textDocument": {"uri": uri}}, 60)
        ranges = answer["result"]
        assert len(ranges) == MAX_FOLDING_RANGES
        assert ranges[0]["startLine"] == 0  # the workflow itself, then its steps array
        assert ranges[1]["startLine"] == 3
        # Steps come before anything inside them: no guidance fold was given.
        step_lines = {r["startLine"] for r in ranges}
        assert all(r["endLine"] - r["startLine"] == 6 for r in ranges[2:]), ranges[2:4]
        assert len(step_lines) == MAX_FOLDING_RANGES
    finally:
        server.close()


def test_folding_honours_the_clients_range_limit(tmp_path):
    server, root = _serve(tmp_path, {"textDocument": {"foldingRange": {"rangeLimit": 50}}})
    try:
        uri = server.open(root / "workflows" / "few.json", _many_steps(200))
        answer = server.call("textDocument/foldingRange", {"textDocument": {"uri": uri}}, 60)
        assert len(answer["result"]) == 50
    finally:
        server.close()


def test_the_outline_stops_at_the_limit_and_says_how_many_steps_are_left_out(tmp_path):
    count = MAX_OUTLINE_SYMBOLS + 1500
    server, root = _serve(tmp_path, {})
    try:
        uri = server.open(root / "workflows" / "many.json", _many_steps(count))
        for _ in range(2):  # the second outline reuses the first's symbols: the same bound
            answer = server.call("textDocument/documentSymbol", {"textDocument": {"uri": uri}}, 60)
            (workflow,) = answer["result"]
            *steps, rest = workflow["children"]
            assert len(steps) == MAX_OUTLINE_SYMBOLS
            assert steps[-1]["name"] == f"step-{MAX_OUTLINE_SYMBOLS - 1}"
            assert rest["name"] == f"… {count - len(steps):,} more steps"
    finally:
        server.close()
