"""Hostile workflow content in the real MCP server's catalog (issue 25): files whose checking,
compiling, reading or regexes used to cost without bound. Each request is answered in bounded
time — a refusal with a code where the workflow cannot be served — and the process keeps serving.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.hostile_workflows import BOUND_FLOW, many_findings_workflow
from tests.mcp.conftest import by_id, run_stdio
from tests.mcp.test_hostile_input import WORKFLOW_LIST, lines
from tests.mcp.test_stdio_protocol import INITIALIZE, INITIALIZED

pytestmark = pytest.mark.slow


def test_a_file_with_thousands_of_findings_does_not_hold_up_the_first_workflow_list(
    project, tmp_path
):
    """The catalog lints every file it loads: 6,000 findings in one prompt cost over a minute
    before the first `workflow_list` was answered; now the file is left out in seconds."""
    (project / "workflows" / "many-findings.json").write_text(
        json.dumps(many_findings_workflow(6000))
    )
    messages, code, stderr = run_stdio(
        project, tmp_path, lines(INITIALIZE, INITIALIZED, WORKFLOW_LIST), timeout=30
    )
    listed = {w["id"] for w in by_id(messages)[99]["result"]["workflows"]}
    assert "test-flow" in listed and "many-findings" not in listed
    assert code == 0, stderr[-2000:]


def next_of(request_id: int, workflow_id: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "workflow_next",
        "params": {"workflowId": workflow_id, "completedSteps": []},
    }


def test_a_fifo_as_bindings_file_does_not_hang_workflow_next(project, tmp_path):
    """`.workrail/bindings.json` was read with `read_text()` while the catalog's lock was held:
    a FIFO there hung that `workflow_next` and every one after it. Now it is not read."""
    (project / "workflows" / "bound-flow.json").write_text(json.dumps(BOUND_FLOW))
    (project / ".workrail").mkdir()
    os.mkfifo(project / ".workrail" / "bindings.json")
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        lines(INITIALIZE, INITIALIZED, next_of(2, "bound-flow"), next_of(3, "test-flow")),
        timeout=30,
    )
    answers = by_id(messages)
    assert "\n\nAsk team-check.\n\n" in answers[2]["result"]["guidance"]["prompt"]
    assert answers[3]["result"]["step"]["id"] == "understand"
    assert "is not used: This is a named pipe" in stderr
    assert code == 0, stderr[-2000:]
