"""Hostile input against the real server process: deep nesting, hostile files in the catalog.

Every test talks to `python -m workrail_mcp` over its real transport and checks that the hostile
request is refused with a code and that the same process keeps answering afterwards.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from tests.hostile_workflows import alias_bomb, deep_run_condition_workflow
from tests.mcp.conftest import by_id, run_stdio, server_command, server_env
from tests.mcp.messages import INITIALIZE, INITIALIZED
from workrail_engine.limits import MAX_NESTING

pytestmark = pytest.mark.slow

WORKFLOW_LIST = {"jsonrpc": "2.0", "id": 99, "method": "workflow_list"}


def deep_object(levels: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def workflow_next(request_id: int, context: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "workflow_next",
        "params": {"workflowId": "test-flow", "completedSteps": [], "context": context},
    }


def tools_call(request_id: int, name: str, arguments: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def lines(*messages: dict) -> list[str]:
    return [json.dumps(m) for m in messages]


def test_deep_context_is_refused_and_the_stdio_server_keeps_serving(project, tmp_path):
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        lines(
            INITIALIZE,
            INITIALIZED,
            workflow_next(2, deep_object(256)),
            tools_call(
                3,
                "workflow_next",
                {"workflowId": "test-flow", "completedSteps": [], "context": deep_object(300)},
            ),
            workflow_next(4, deep_object(MAX_NESTING - 3)),  # params → context → … fits
            WORKFLOW_LIST,
        ),
    )
    answers = by_id(messages)
    for request_id in (2, 3):
        error = answers[request_id]["error"]
        assert error["code"] == -32602, error
        assert f"deeper than {MAX_NESTING} levels" in error["data"]["details"]
    assert answers[4]["result"]["step"]["id"] == "understand"
    assert "test-flow" in {w["id"] for w in answers[99]["result"]["workflows"]}
    assert code == 0, stderr[-2000:]


def test_a_300_deep_run_condition_is_refused_by_create_workflow_and_left_out_of_the_catalog(
    project, tmp_path
):
    (project / "workflows" / "deep-condition.json").write_text(
        json.dumps(deep_run_condition_workflow(300))
    )
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        lines(
            INITIALIZE,
            INITIALIZED,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "workflow_get",
                "params": {"id": "deep-condition"},
            },
            tools_call(3, "workflow_get", {"id": "deep-condition"}),
            tools_call(
                4,
                "create_workflow",
                {
                    "name": "deeper",
                    "definition": {**deep_run_condition_workflow(300), "id": "deeper"},
                },
            ),
            WORKFLOW_LIST,
        ),
    )
    answers = by_id(messages)
    # left out of the catalog, and asked for by its file name: its diagnostics, not "not found"
    assert answers[2]["error"]["code"] == -32002
    assert [d["code"] for d in answers[2]["error"]["data"]["diagnostics"]] == ["WR005"]
    assert answers[3]["result"]["isError"] is True
    assert answers[4]["error"]["code"] == -32602
    assert not (project / "workflows" / "deeper.json").exists()
    assert "test-flow" in {w["id"] for w in answers[99]["result"]["workflows"]}
    assert code == 0, stderr[-2000:]


def _http_server(project: Path, tmp_path: Path) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        server_command(project, "--transport", "http", "--port", "0"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path),
        cwd=tmp_path,
        text=True,
    )
    deadline = time.monotonic() + 30
    banner = ""
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        assert line, f"server exited: {process.poll()} {banner}"
        banner += line
        if line.startswith("Press Ctrl+C"):
            break
    match = re.search(r"listening on (http://\S+)", banner)
    assert match, banner
    return process, match.group(1)


def _answer(response: httpx2.Response) -> dict:
    """The JSON-RPC message of a response, whether sent as JSON or as one SSE event."""
    assert response.status_code == 200, (response.status_code, response.text)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        data = [d for d in data if d]
        assert data, response.text
        return json.loads(data[-1])
    assert response.content, "empty body"
    return response.json()


def http_session(http: httpx2.Client, url: str) -> dict[str, str]:
    """Initialize an MCP session over HTTP; the headers its later requests send."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    started = http.post(url, content=json.dumps(INITIALIZE), headers=headers)
    assert started.status_code == 200
    session = started.headers.get("mcp-session-id")
    if session:
        headers["mcp-session-id"] = session
    headers["mcp-protocol-version"] = INITIALIZE["params"]["protocolVersion"]
    http.post(url, content=json.dumps(INITIALIZED), headers=headers)
    return headers


def test_deep_context_over_http_is_refused_and_the_server_keeps_serving(project, tmp_path):
    process, url = _http_server(project, tmp_path)
    try:
        with httpx2.Client(timeout=20) as http:
            headers = http_session(http, url)

            # 100 levels: within what the SDK's JSON parser takes, so our limit answers
            for request in (
                workflow_next(2, deep_object(100)),
                tools_call(
                    3,
                    "workflow_next",
                    {"workflowId": "test-flow", "completedSteps": [], "context": deep_object(100)},
                ),
            ):
                answer = _answer(http.post(url, content=json.dumps(request), headers=headers))
                assert answer["error"]["code"] == -32602, answer
                assert f"deeper than {MAX_NESTING} levels" in answer["error"]["data"]["details"]
            # 300 levels: the SDK's parser refuses the body itself (-32700), still with an answer
            refused = http.post(
                url, content=json.dumps(workflow_next(5, deep_object(300))), headers=headers
            )
            assert refused.json()["error"]["code"] in (-32700, -32602)
            after = _answer(
                http.post(
                    url, content=json.dumps(tools_call(4, "workflow_list", {})), headers=headers
                )
            )
            assert "test-flow" in after["result"]["content"][0]["text"]
        assert process.poll() is None
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stderr.close()


async def test_the_stdio_output_pump_answers_an_unserializable_result_and_goes_on():
    """Whatever a result holds, the pump answers −32603 for it and keeps writing."""
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    from workrail_mcp.stdio import _InFlight, _pump_output, _Writer

    read_end, write_end = os.pipe()
    writer = _Writer(os.fdopen(write_end, "wb", buffering=0))
    to_pump, from_sdk = anyio.create_memory_object_stream[SessionMessage](4)
    in_flight, done = _InFlight(), anyio.Event()
    in_flight.started(1)
    in_flight.started(2)
    async with anyio.create_task_group() as group:
        group.start_soon(_pump_output, from_sdk, writer, in_flight, done, None)
        for request_id, result in ((1, {"deep": deep_object(400)}), (2, {"ok": True})):
            response = mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
            await to_pump.send(SessionMessage(response))
        await to_pump.aclose()
        with anyio.fail_after(10):
            await done.wait()
    writer.stream.close()
    with os.fdopen(read_end, "rb") as wire:
        written = [json.loads(line) for line in wire.read().splitlines()]
    assert [m["id"] for m in written] == [1, 2]
    assert written[0]["error"]["code"] == -32603
    assert written[1]["result"] == {"ok": True}
    assert in_flight.idle.is_set()


def test_the_catalog_and_workflow_lint_survive_an_alias_bomb_and_a_fifo(project, tmp_path):
    """The bomb and a FIFO sit in ./workflows; the catalog loads around them, lint refuses the
    bomb's text, and a parameters `$ref` to a file is WR406 — all within the run's timeout."""
    (project / "workflows" / "bomb.yaml").write_text(alias_bomb())
    os.mkfifo(project / "workflows" / "pipe.json")
    secret = tmp_path / "secret.json"
    secret.write_text('{"description": "SECRET-MARKER-41"}')
    ref_flow = {
        "id": "ref-flow",
        "name": "Refs",
        "description": "d",
        "parameters": {"type": "object", "properties": {"p": {"$ref": secret.as_uri()}}},
        "steps": [{"id": "only", "title": "Only", "prompt": "p"}],
    }
    started = time.monotonic()
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        lines(
            INITIALIZE,
            INITIALIZED,
            WORKFLOW_LIST,
            tools_call(2, "workflow_lint", {"text": alias_bomb(), "format": "yaml"}),
            tools_call(3, "workflow_lint", {"definition": ref_flow}),
            tools_call(4, "create_workflow", {"name": "ref-flow", "definition": ref_flow}),
        ),
        timeout=60,
    )
    assert time.monotonic() - started < 60
    answers = by_id(messages)
    assert "test-flow" in {w["id"] for w in answers[99]["result"]["workflows"]}
    bomb = json.loads(answers[2]["result"]["content"][0]["text"])
    assert [d["code"] for d in bomb["diagnostics"]] == ["WR008"]
    refs = json.loads(answers[3]["result"]["content"][0]["text"])
    assert [d["code"] for d in refs["diagnostics"]] == ["WR406"]
    assert answers[4]["result"]["isError"] is True
    assert not (project / "workflows" / "ref-flow.json").exists()
    assert "SECRET-MARKER-41" not in json.dumps(messages) + stderr
    assert code == 0, stderr[-2000:]


NEW_FLOW = {
    "id": "linked-flow",
    "name": "Linked",
    "description": "Written through a symlinked workflows directory",
    "steps": [{"id": "only", "title": "Only", "prompt": "p"}],
}


@pytest.mark.parametrize("inside", [False, True], ids=["outside", "inside"])
def test_create_workflow_through_a_symlinked_workflows_directory(tmp_path, inside):
    """`workflows` as a symlink: written when it leads inside the project, refused (−32007)
    when it leads out of it (a cloned repository must not make the agent write elsewhere)."""
    project = tmp_path / "project"
    project.mkdir()
    target = project / "shared" / "flows" if inside else tmp_path / "elsewhere"
    target.mkdir(parents=True)
    (project / "workflows").symlink_to(target, target_is_directory=True)
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        lines(
            INITIALIZE,
            INITIALIZED,
            tools_call(2, "create_workflow", {"name": "linked-flow", "definition": NEW_FLOW}),
        ),
    )
    assert code == 0, stderr[-2000:]
    answers = by_id(messages)
    result = answers[2]["result"]
    written = target / "linked-flow.json"
    if inside:
        assert not result.get("isError"), result
        assert written.is_file()
        # a new server process finds it through the link
        again, code, stderr = run_stdio(
            project,
            tmp_path,
            lines(
                INITIALIZE,
                INITIALIZED,
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "workflow_get",
                    "params": {"id": "linked-flow"},
                },
            ),
        )
        assert by_id(again)[3]["result"]["id"] == "linked-flow"
        assert code == 0, stderr[-2000:]
    else:
        assert result["isError"] is True
        assert json.loads(result["content"][0]["text"])["error"]["code"] == -32007
        assert not written.exists() and list(target.iterdir()) == []
