"""Hostile workflow content in the real MCP server's catalog (docs/security.md): files whose checking,
compiling, reading or regexes used to cost without bound. Each request is answered in bounded
time — a refusal with a code where the workflow cannot be served — and the process keeps serving.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.hostile_workflows import (
    AMPLIFIED_CALLER,
    AMPLIFIER_ROUTINE,
    BACKTRACKING,
    BOUND_FLOW,
    REGEX_COMPILE_BOMB,
    SLOW_TEXT,
    many_findings_workflow,
    regex_rules_workflow,
)
from tests.mcp.conftest import by_id, run_stdio
from tests.mcp.messages import INITIALIZE, INITIALIZED
from tests.mcp.test_hostile_input import (
    WORKFLOW_LIST,
    _answer,
    _http_server,
    http_session,
    lines,
    tools_call,
)

pytestmark = pytest.mark.slow


def serve(project, tmp_path, *messages: dict, timeout: float = 60) -> tuple[dict, int, str]:
    """The answers by id of a real stdio server to ``messages`` after the handshake."""
    answered, code, stderr = run_stdio(
        project, tmp_path, lines(INITIALIZE, INITIALIZED, *messages), timeout=timeout
    )
    return by_id(answered), code, stderr


def test_a_file_with_thousands_of_findings_does_not_hold_up_the_first_workflow_list(
    project, tmp_path
):
    """The catalog lints every file it loads: 6,000 findings in one prompt cost over a minute
    before the first `workflow_list` was answered; now the file is left out in seconds."""
    (project / "workflows" / "many-findings.json").write_text(
        json.dumps(many_findings_workflow(6000))
    )
    answers, code, stderr = serve(project, tmp_path, WORKFLOW_LIST, timeout=30)
    listed = {w["id"] for w in answers[99]["result"]["workflows"]}
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
    answers, code, stderr = serve(
        project, tmp_path, next_of(2, "bound-flow"), next_of(3, "test-flow"), timeout=30
    )
    assert "\n\nAsk team-check.\n\n" in answers[2]["result"]["guidance"]["prompt"]
    assert answers[3]["result"]["step"]["id"] == "understand"
    assert "is not used: This is a named pipe" in stderr
    assert code == 0, stderr[-2000:]


def _amplified_project(project) -> None:
    for flow in (AMPLIFIER_ROUTINE, AMPLIFIED_CALLER):
        (project / "workflows" / f"{flow['id']}.json").write_text(json.dumps(flow))


def _refused_as_too_large(error: dict) -> None:
    assert error["code"] == -32002, error
    assert [p["code"] for p in error["data"]["problems"]] == ["WR811"], error
    assert len(json.dumps(error)) < 10_000


def test_a_workflow_that_compiles_to_a_gigabyte_is_refused_over_stdio(project, tmp_path):
    """One `workflow_next` of it built a 1 GB prompt; now −32002 with WR811, and the server
    goes on serving the others. `workflow_lint` and `create_workflow` compile a draft against the
    catalog's routines: WR811 there too, and nothing is written."""
    _amplified_project(project)
    another = {**AMPLIFIED_CALLER, "id": "amplified-too"}
    answers, code, stderr = serve(
        project,
        tmp_path,
        next_of(2, "amplified"),
        tools_call(3, "workflow_next", {"workflowId": "amplified", "completedSteps": []}),
        next_of(4, "test-flow"),
        tools_call(5, "workflow_lint", {"definition": AMPLIFIED_CALLER}),
        tools_call(6, "create_workflow", {"name": "amplified-too", "definition": another}),
    )
    _refused_as_too_large(answers[2]["error"])
    assert answers[3]["result"]["isError"] is True
    _refused_as_too_large(json.loads(answers[3]["result"]["content"][0]["text"])["error"])
    assert answers[4]["result"]["step"]["id"] == "understand"
    linted = json.loads(answers[5]["result"]["content"][0]["text"])
    assert [d["code"] for d in linted["diagnostics"]] == ["WR811"]
    assert answers[6]["result"]["isError"] is True
    assert "WR811" in answers[6]["result"]["content"][0]["text"]
    assert not (project / "workflows" / "amplified-too.json").exists()
    assert code == 0, stderr[-2000:]


def test_a_workflow_that_compiles_to_a_gigabyte_is_refused_over_http(project, tmp_path):
    """Over HTTP the same `workflow_next` killed the server for every client ("memory
    allocation of 2000000160 bytes failed"); now it is refused and the server keeps serving."""
    import httpx2

    _amplified_project(project)
    process, url = _http_server(project, tmp_path)
    try:
        with httpx2.Client(timeout=60) as http:
            headers = http_session(http, url)

            def post(message: dict) -> dict:
                return _answer(http.post(url, content=json.dumps(message), headers=headers))

            _refused_as_too_large(post(next_of(2, "amplified"))["error"])
            assert post(next_of(3, "test-flow"))["result"]["step"]["id"] == "understand"
        assert process.poll() is None
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stderr.close()


def test_a_regex_compile_bomb_in_the_catalog_is_left_out_without_compiling_it(project, tmp_path):
    """The catalog's scan compiled the pattern and grew to a 4 GiB cap; now the file is invalid
    (WR401) and `workflow_list` answers at once."""
    flow = regex_rules_workflow(REGEX_COMPILE_BOMB, workflow_id="regex-bomb")
    (project / "workflows" / "regex-bomb.json").write_text(json.dumps(flow))
    get = {"jsonrpc": "2.0", "id": 2, "method": "workflow_get", "params": {"id": "regex-bomb"}}
    answers, code, stderr = serve(project, tmp_path, WORKFLOW_LIST, get, timeout=60)
    assert "test-flow" in {w["id"] for w in answers[99]["result"]["workflows"]}
    error = answers[2]["error"]
    assert error["code"] == -32002
    assert "WR401" in {d["code"] for d in error["data"]["diagnostics"]}
    assert code == 0, stderr[-2000:]


def test_backtracking_regexes_share_one_time_budget_per_call(project, tmp_path):
    """200 backtracking rules in one `workflow_validate`, each stopped only by its own 0.1 s
    limit, took 20–31 s; 200 `matches` conditions in one `workflow_next` the same. Now one call's
    fallback matches share 1 s, so both answer within seconds (each would take 20 s before)."""
    flow = regex_rules_workflow(BACKTRACKING, rules=200, workflow_id="regex-rules")
    (project / "workflows" / "regex-rules.json").write_text(json.dumps(flow))
    validate = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "workflow_validate",
        "params": {"workflowId": "regex-rules", "stepId": "answer", "output": SLOW_TEXT},
    }
    after_answer = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "workflow_next",
        "params": {
            "workflowId": "regex-rules",
            "completedSteps": ["answer"],
            "context": {"x": SLOW_TEXT},
        },
    }
    answers, code, stderr = serve(project, tmp_path, validate, after_answer, timeout=25)
    checked = answers[2]["result"]
    assert checked["valid"] is False and "rule 0" in checked["issues"]
    # a match cut short counts as no match: every guarded step is skipped
    assert answers[3]["result"]["step"]["id"] == "last"
    assert code == 0, stderr[-2000:]
