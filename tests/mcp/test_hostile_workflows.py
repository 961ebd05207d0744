"""Hostile workflow content in the real MCP server's catalog (issue 25): files whose checking,
compiling, reading or regexes used to cost without bound. Each request is answered in bounded
time — a refusal with a code where the workflow cannot be served — and the process keeps serving.
"""

from __future__ import annotations

import json

import pytest

from tests.mcp.conftest import by_id, run_stdio
from tests.mcp.test_hostile_input import WORKFLOW_LIST, lines
from tests.mcp.test_stdio_protocol import INITIALIZE, INITIALIZED

pytestmark = pytest.mark.slow


def test_a_file_with_thousands_of_findings_does_not_hold_up_the_first_workflow_list(
    project, tmp_path
):
    """The catalog lints every file it loads: 6,000 findings in one prompt cost over a minute
    before the first `workflow_list` was answered; now the file is left out in seconds."""
    prompt = " ".join(["{{parameters.nope}}"] * 6000)
    flow = {
        "id": "many-findings",
        "name": "Many findings",
        "description": "d",
        "steps": [{"id": "only", "title": "Only", "prompt": prompt}],
    }
    (project / "workflows" / "many-findings.json").write_text(json.dumps(flow))
    messages, code, stderr = run_stdio(
        project, tmp_path, lines(INITIALIZE, INITIALIZED, WORKFLOW_LIST), timeout=30
    )
    listed = {w["id"] for w in by_id(messages)[99]["result"]["workflows"]}
    assert "test-flow" in listed and "many-findings" not in listed
    assert code == 0, stderr[-2000:]
