"""WR409: a validation rule's message that quotes a JSON snippet (agents copy it as a string).

The rule on messages (table), the finding on a workflow (engine), and the same finding from the
three front ends through the one diagnostics path: `workrail validate` as a subprocess, the
language server process, and `workflow_lint` on the stdio MCP server."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_hostile_files_cli import workrail
from tests.lsp.raw_lsp import RawLspServer
from tests.mcp.conftest import by_id, run_stdio
from tests.mcp.messages import INITIALIZE, INITIALIZED
from workrail_engine.lint import lint_text
from workrail_engine.lint.quoted_json import (
    MAX_QUOTED_JSON_CHARS,
    MAX_QUOTED_OPENINGS,
    QUOTED_JSON_IN_MESSAGE,
    quoted_json_snippet,
)

# Upstream's own example (its loop-validation and validation-engine tests): the escaped form.
UPSTREAM_MESSAGE = 'Output must include "{\\"state\\": \\"init\\"}"'

FLOW = {
    "id": "quoted-flow",
    "name": "Quoted flow",
    "version": "1.0.0",
    "steps": [
        {
            "id": "report",
            "title": "Report",
            "prompt": "Report the state.",
            "validationCriteria": {
                "and": [
                    {"type": "length", "min": 1, "message": "Say something"},
                    {"type": "contains", "value": "state", "message": UPSTREAM_MESSAGE},
                ]
            },
        }
    ],
}
POINTER = "/steps/0/validationCriteria/and/1/message"


@pytest.mark.parametrize(
    ("message", "snippet"),
    [
        pytest.param(UPSTREAM_MESSAGE, '{"state": "init"}', id="escaped-in-double-quotes"),
        pytest.param('Return "{"state": "init"}"', '{"state": "init"}', id="double-quotes"),
        pytest.param("Return '[1, 2]' exactly", "[1, 2]", id="single-quoted-array"),
        pytest.param('Answer " { "ok": true }"', '{"ok": true}', id="space-after-quote"),
        pytest.param('Must be "{name}"', None, id="placeholder"),
        pytest.param("Fill '[optional]' in", None, id="bracketed-word"),
        pytest.param('Return "{}" or "[]"', None, id="empty-json"),
        pytest.param('Return {"decision": "stop"}', None, id="unquoted-json"),
        pytest.param('Return `{"decision": "stop"}`', None, id="markdown-code-span"),
        pytest.param('Say "yes" [then] {stop}', None, id="prose"),
        pytest.param('"' + "[" * 100_000, None, id="nested-past-the-parser-stack"),
    ],
)
def test_which_messages_quote_json(message: str, snippet: str | None) -> None:
    assert quoted_json_snippet(message) == snippet


def test_a_long_message_full_of_quoted_brackets_is_judged_fast() -> None:
    """A megabyte of near misses: only the first openings are tried, each within its window."""
    near_misses = "\"['{" * 250_000
    began = time.perf_counter()
    assert quoted_json_snippet(near_misses + '"[1, 2]"') is None
    assert time.perf_counter() - began < 1.0
    early = "\"['{" * (MAX_QUOTED_OPENINGS // 2 - 1) + '"[1, 2]"'
    assert quoted_json_snippet(early) == "[1, 2]"
    too_long = '"[' + ", ".join(["1"] * MAX_QUOTED_JSON_CHARS) + ']"'
    assert quoted_json_snippet(too_long) is None


def _codes(workflow: dict[str, Any]) -> list[tuple[str, str]]:
    found = lint_text(json.dumps(workflow, indent=2), "quoted-flow.json").diagnostics
    return [(d.code, d.pointer) for d in found if d.code == QUOTED_JSON_IN_MESSAGE]


def test_the_finding_is_a_warning_on_the_message_in_compositions_only_of_rules() -> None:
    result = lint_text(json.dumps(FLOW, indent=2), "quoted-flow.json")
    (finding,) = result.diagnostics
    assert (finding.code, finding.severity.value, finding.pointer) == (
        QUOTED_JSON_IN_MESSAGE,
        "warning",
        POINTER,
    )
    assert '{"state": "init"}' in finding.message
    good = copy.deepcopy(FLOW)
    good["steps"][0]["validationCriteria"]["and"][1]["message"] = "Set state to init"
    assert _codes(good) == []
    # a condition has no message an agent reads: a quoted JSON there is no rule's message
    conditional = copy.deepcopy(good)
    conditional["steps"][0]["runCondition"] = {"var": "x", "equals": "y", "message": '"[1]"'}
    assert _codes(conditional) == []


@pytest.mark.slow
def test_the_cli_the_language_server_and_workflow_lint_report_it(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "workflows").mkdir(parents=True)
    path = root / "workflows" / "quoted-flow.json"
    text = json.dumps(FLOW, indent=2)
    path.write_text(text, encoding="utf-8")

    checked = workrail(root, "validate", "--format", "json", str(path))
    assert checked.returncode == 0, checked.stderr  # a warning alone
    files = json.loads(checked.stdout)["files"]
    cli = [(d["code"], d["pointer"]) for f in files for d in f["diagnostics"]]

    server = RawLspServer(root)
    try:
        server.initialize({"textDocument": {"diagnostic": {}}})
        uri = server.open(path, text)
        pulled = server.call("textDocument/diagnostic", {"textDocument": {"uri": uri}}, 30)
    finally:
        server.close()
    lsp = [d["code"] for d in pulled["result"]["items"]]

    lines = [
        json.dumps(INITIALIZE),
        json.dumps(INITIALIZED),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "workflow_lint", "arguments": {"definition": FLOW}},
            }
        ),
    ]
    messages, _, _ = run_stdio(root, tmp_path, lines)
    report = json.loads(by_id(messages)[2]["result"]["content"][0]["text"])
    mcp = [(d["code"], d["pointer"]) for d in report["diagnostics"]]

    assert cli == mcp == [(QUOTED_JSON_IN_MESSAGE, POINTER)]
    assert lsp == [QUOTED_JSON_IN_MESSAGE]
