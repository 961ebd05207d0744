"""The real server process over stdio, fed raw newline-delimited JSON (the specs' examples)."""

from __future__ import annotations

import json

import pytest

from tests.mcp.conftest import by_id, run_stdio
from tests.mcp.messages import INITIALIZED, SPEC_EXAMPLE_INITIALIZE

pytestmark = pytest.mark.slow


def lines(*messages) -> list[str]:
    return [m if isinstance(m, str) else json.dumps(m) for m in messages]


def initialize_with(version, request_id=1) -> dict:
    params = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    if version is not None:
        params["protocolVersion"] = version
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def test_the_handshake_specs_complete_example(project, tmp_path):
    """Steps 1-6 of 'Complete Handshake Example', then shutdown (→ null, exit 0)."""
    messages, code, _ = run_stdio(
        project,
        tmp_path,
        lines(
            SPEC_EXAMPLE_INITIALIZE,
            INITIALIZED,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
            {"jsonrpc": "2.0", "id": 3, "method": "workflow_list", "params": {}},
            {"jsonrpc": "2.0", "id": 99, "method": "shutdown", "params": {}},
        ),
    )
    answers = by_id(messages)
    init = answers[1]["result"]
    assert init["protocolVersion"] == "2024-11-05"
    assert init["serverInfo"]["name"] == "workflowlookup"
    assert "tools" in init["capabilities"] and "resources" in init["capabilities"]
    names = [tool["name"] for tool in answers[2]["result"]["tools"]]
    assert names[:4] == ["workflow_list", "workflow_get", "workflow_next", "workflow_validate"]
    listed = {
        w["id"]: w for w in answers[3]["result"]["workflows"]
    }  # a bare result, not a CallToolResult
    assert listed[
        "ai-task-implementation"
    ] == {  # the project's copy of the spec example shadows the bundled one
        "id": "ai-task-implementation",
        "name": "AI Task Prompt Workflow",
        "description": "Guides through task understanding → planning → implementation → verification",
        "category": "",
        "version": "",
        "source": "project",
    }
    assert answers[99] == {"jsonrpc": "2.0", "id": 99, "result": None}
    assert messages[-1]["id"] == 99  # the last thing said
    assert code == 0


def test_the_api_specs_example_session_as_direct_calls(project, tmp_path):
    messages, code, _ = run_stdio(
        project,
        tmp_path,
        lines(
            SPEC_EXAMPLE_INITIALIZE,
            INITIALIZED,
            {"jsonrpc": "2.0", "id": "list-1", "method": "workflow_list", "params": None},
            {
                "jsonrpc": "2.0",
                "id": "get-1",
                "method": "workflow_get",
                "params": {"id": "ai-task-implementation"},
            },
            {
                "jsonrpc": "2.0",
                "id": "next-1",
                "method": "workflow_next",
                "params": {
                    "workflowId": "ai-task-implementation",
                    "completedSteps": [],
                    "context": {"taskId": "TASK-123"},
                },
            },
            {
                "jsonrpc": "2.0",
                "id": "validate-1",
                "method": "workflow_validate",
                "params": {
                    "workflowId": "test-flow",
                    "stepId": "understand",
                    "output": "I have analyzed the requirements.",
                },
            },
        ),
    )
    answers = by_id(messages)
    assert {"ai-task-implementation", "test-flow", "coding-task"} <= {
        w["id"] for w in answers["list-1"]["result"]["workflows"]
    }
    assert answers["get-1"]["result"]["steps"][0]["requireConfirmation"] is True
    next_step = answers["next-1"]["result"]
    assert next_step["step"]["id"] == "understand" and next_step["isComplete"] is False
    assert answers["validate-1"]["result"] == {"valid": True, "issues": [], "suggestions": []}
    assert code == 0


def test_every_error_example_of_both_specs(project, tmp_path):
    messages, _, _ = run_stdio(
        project,
        tmp_path,
        lines(
            SPEC_EXAMPLE_INITIALIZE,
            INITIALIZED,
            '{"jsonrpc": "2.0", "id": 3, "method": "workflow_list"',  # parse error
            {"jsonrpc": "2.0", "id": 3, "method": "non_existent_tool", "params": {}},
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "workflow_next",
                "params": {"completedSteps": []},
            },
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "workflow_get",
                "params": {"id": "nonexistent-workflow"},
            },
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "workflow_next",
                "params": {
                    "workflowId": "test-flow",
                    "completedSteps": [],
                    "currentStep": "nonexistent-step",
                },
            },
            {
                "jsonrpc": "2.0",
                "id": "error-1",
                "method": "workflow_get",
                "params": {"id": "non-existent-workflow"},
            },
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "workflow_validate",
                "params": {"workflowId": "test-flow", "stepId": "nonexistent-step", "output": "x"},
            },
            {"jsonrpc": "2.0", "id": 8, "params": {}},  # not a request
            {"jsonrpc": "1.0", "id": 9, "method": "workflow_list"},
        ),
    )
    answers = by_id(messages)
    assert (
        answers[None]["error"]["code"] == -32700
        and answers[None]["error"]["message"] == "Parse error"
    )
    assert answers[None]["error"]["data"]["details"]
    assert answers[3]["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": {"method": "non_existent_tool"},
    }
    assert answers[4]["error"] == {
        "code": -32602,
        "message": "Invalid params",
        "data": {"details": "workflowId is required"},
    }
    assert (
        answers[5]["error"]["code"] == -32001
        and answers[5]["error"]["data"]["workflowId"] == "nonexistent-workflow"
    )
    assert answers["error-1"]["error"]["code"] == -32001
    assert (
        answers[6]["error"]["code"] == -32003
        and answers[6]["error"]["data"]["stepId"] == "nonexistent-step"
    )
    assert answers[7]["error"]["code"] == -32003
    assert answers[8]["error"]["code"] == -32600 and answers[9]["error"]["code"] == -32600


KNOWN_AND_NEWER = {
    "2024-11-05": "2024-11-05",  # the oldest: echoed
    "2025-03-26": "2025-03-26",
    "2025-06-18": "2025-06-18",
    "2025-11-25": "2025-11-25",
    "2099-01-01": "2025-11-25",  # newer than we know: our latest
}
OLD_OR_MALFORMED = ["2024-10-01", "1.0", "2025-13-01", "", "latest"]


def test_protocol_version_rules(project, tmp_path):
    """One process: each `initialize` is answered on its own (failed ones change nothing)."""
    requested = [*KNOWN_AND_NEWER, *OLD_OR_MALFORMED]
    messages, _, _ = run_stdio(
        project,
        tmp_path,
        lines(*(initialize_with(version, n) for n, version in enumerate(requested, start=1))),
    )
    answers = by_id(messages)
    for n, version in enumerate(requested, start=1):
        if version in KNOWN_AND_NEWER:
            assert answers[n]["result"]["protocolVersion"] == KNOWN_AND_NEWER[version], version
        else:
            error = answers[n]["error"]
            assert error["code"] == -32000 and error["message"] == "Unsupported protocol version"
            assert error["data"]["requestedVersion"] == version
            assert "2024-11-05" in error["data"]["supportedVersions"]


def test_missing_version_is_invalid_params_and_client_info_is_optional(project, tmp_path):
    no_client_info = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "initialize",
        "params": {"protocolVersion": "2024-11-05", "capabilities": {}},
    }
    messages, _, _ = run_stdio(
        project,
        tmp_path,
        lines(
            initialize_with(None),
            initialize_with(20241105, 2),
            no_client_info,
            {"jsonrpc": "2.0", "id": 4, "method": "workflow_get", "params": {"id": "test-flow"}},
        ),
    )
    answers = by_id(messages)
    assert answers[1]["error"] == {
        "code": -32602,
        "message": "Invalid params",
        "data": {"details": "protocolVersion is required"},
    }
    assert answers[2]["error"]["code"] == -32602
    assert (
        answers[3]["result"]["protocolVersion"] == "2024-11-05"
    )  # the handshake spec: clientInfo is optional
    assert answers[4]["result"]["id"] == "test-flow"


def test_no_tool_runs_before_initialization(project, tmp_path):
    messages, _, _ = run_stdio(
        project,
        tmp_path,
        lines(
            {"jsonrpc": "2.0", "id": 1, "method": "workflow_list", "params": {}},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "workflow_list", "arguments": {}},
            },
            {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        ),
    )
    answers = by_id(messages)
    for request_id in (1, 2):
        assert answers[request_id]["error"]["code"] == -32602
        assert "initialize" in answers[request_id]["error"]["data"]["details"]
    assert answers[3]["result"] == {}


def test_tools_call_errors_are_results_with_the_same_code(project, tmp_path):
    messages, _, _ = run_stdio(
        project,
        tmp_path,
        lines(
            initialize_with("2025-06-18"),
            INITIALIZED,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "workflow_get", "arguments": {"id": "nonexistent-workflow"}},
            },
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "workflow_next", "arguments": {}},
            },
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "no_such_tool", "arguments": {}},
            },
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "workflow_get", "arguments": {"id": "test-flow"}},
            },
        ),
    )
    answers = by_id(messages)
    not_found = answers[2]["result"]
    assert not_found["isError"] is True
    assert json.loads(not_found["content"][0]["text"])["error"]["code"] == -32001
    assert json.loads(answers[3]["result"]["content"][0]["text"])["error"]["code"] == -32602
    assert (
        answers[4]["error"]["code"] == -32602
        and "no_such_tool" in answers[4]["error"]["data"]["details"]
    )
    found = answers[5]["result"]
    assert found["structuredContent"]["id"] == "test-flow"
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]


def test_shutdown_answers_null_and_exits_zero_with_input_still_open(project, tmp_path):
    from tests.mcp.conftest import stdio_process

    process = stdio_process(project, tmp_path)
    for message in (
        SPEC_EXAMPLE_INITIALIZE,
        {"jsonrpc": "2.0", "id": 99, "method": "shutdown", "params": {}},
    ):
        process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()  # stdin stays open: the server must leave on its own
    with process:
        assert process.wait(timeout=30) == 0
        out = [json.loads(line) for line in process.stdout.read().decode().splitlines()]
    assert out[-1] == {"jsonrpc": "2.0", "id": 99, "result": None}


def test_direct_calls_in_the_stateless_era(project, tmp_path):
    """2026-07-28: no handshake; `_meta` carries the version and is not taken for an argument."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    messages, code, _ = run_stdio(
        project,
        tmp_path,
        lines(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "workflow_get",
                "params": {"id": "test-flow", "_meta": meta},
            },
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "workflow_next",
                    "arguments": {"workflowId": "test-flow", "completedSteps": []},
                    "_meta": meta,
                },
            },
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "workflow_get",
                "params": {"id": "nope-flow", "_meta": meta},
            },
        ),
    )
    answers = by_id(messages)
    assert answers[1]["result"]["name"] == "Test Flow"
    assert answers[2]["result"]["structuredContent"]["step"]["id"] == "understand"
    assert answers[2]["result"]["resultType"] == "complete"
    assert answers[3]["error"]["code"] == -32001
    assert code == 0


def test_oldest_revision_gets_text_only_tool_results(project, tmp_path):
    """2024-11-05 has no structuredContent: the same JSON comes as text only."""
    messages, _, _ = run_stdio(
        project,
        tmp_path,
        lines(
            SPEC_EXAMPLE_INITIALIZE,
            INITIALIZED,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "workflow_get", "arguments": {"id": "test-flow"}},
            },
        ),
    )
    result = by_id(messages)[2]["result"]
    assert "structuredContent" not in result
    assert json.loads(result["content"][0]["text"])["id"] == "test-flow"


def test_a_clients_responses_get_no_reply(project, tmp_path):
    """JSON-RPC: a response (no method; `result` or `error`) is never answered, whatever it holds."""
    responses = [
        {"jsonrpc": "2.0", "id": 7, "result": {}},
        {"jsonrpc": "2.0", "id": 8, "result": None},
        {"jsonrpc": "2.0", "id": 9, "result": 42},
        {"jsonrpc": "2.0", "id": "r", "result": "text"},
        {"jsonrpc": "2.0", "id": 10, "error": {"code": -1, "message": "no"}},
        {"jsonrpc": "2.0", "id": 11, "error": "not an error object"},
        {"jsonrpc": "2.0", "id": 12, "result": {}, "error": {"code": 1, "message": "both"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        {"jsonrpc": "2.0", "id": {"odd": 1}, "result": {}},
        {"jsonrpc": "1.0", "id": 13, "result": {}},
    ]
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        lines(
            SPEC_EXAMPLE_INITIALIZE,
            INITIALIZED,
            *responses,
            {"jsonrpc": "2.0", "id": 14},  # neither a request nor a response: still answered
            {"jsonrpc": "2.0", "id": 99, "method": "ping"},
        ),
    )
    assert code == 0, stderr[-2000:]
    # Answers may come in any order (JSON-RPC): the lines the server answers itself can overtake
    # the SDK's answer to initialize when the client sends everything at once.
    assert len(messages) == 3, messages
    answers = by_id(messages)
    assert set(answers) == {1, 14, 99}, messages
    assert answers[14]["error"]["code"] == -32600 and answers[99]["result"] == {}


def test_lone_surrogates_and_infinite_numbers_are_refused_without_a_traceback(project, tmp_path):
    hostile = [
        b'{"jsonrpc": "2.0", "id": 2, "method": "workflow_next", "params": '
        b'{"workflowId": "test-flow", "completedSteps": [], "context": {"a": "\\ud800"}}}',
        b'{"jsonrpc": "2.0", "id": "\\udc00", "method": "workflow_list"}',
        b'{"jsonrpc": "2.0", "id": 3, "method": "workflow_next", "params": '
        b'{"workflowId": "test-flow", "completedSteps": [], "context": {"size": 1e999}}}',
    ]
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        [
            *lines(SPEC_EXAMPLE_INITIALIZE, INITIALIZED),
            *hostile,
            *lines({"jsonrpc": "2.0", "id": 99, "method": "ping"}),
        ],
    )
    assert code == 0, stderr[-2000:]
    assert len(messages) == 5, messages
    answers = by_id(messages)  # in any order, as above
    assert set(answers) == {1, 2, "\udc00", 3, 99}, messages
    assert all(answers[i]["error"]["code"] == -32602 for i in (2, "\udc00", 3))
    assert "lone surrogate" in answers[2]["error"]["data"]["details"]
    assert "too large" in answers[3]["error"]["data"]["details"]
    assert "Traceback" not in stderr
