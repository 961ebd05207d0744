"""One tool surface: the run tools behave like every other tool.

In memory through the SDK's Client (both protocol eras), and over raw stdio with the run tools
called as direct JSON-RPC methods.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from tests.mcp.conftest import by_id, run_stdio
from tests.mcp.messages import INITIALIZE, INITIALIZED
from tests.mcp.tool_results import error_of
from workrail_mcp import create_server

RUN_TOOLS = ("run_workflow", "get_workflow_run", "cancel_workflow", "continue_workflow")


@pytest.fixture(autouse=True)
def run_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("WORKRAIL_HOME", str(home))
    monkeypatch.delenv("WORKRAIL_DATABASE_URL", raising=False)
    return home


@pytest.fixture(params=["legacy", "2026-07-28"])
def connect(request, catalog):
    return lambda: Client(create_server(catalog), mode=request.param)


async def test_run_tools_are_strict_like_the_others(connect):
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in RUN_TOOLS:
            assert tools[name].input_schema["additionalProperties"] is False, name
            assert "report" not in tools[name].input_schema["properties"], name


async def test_a_misspelt_dry_run_is_refused_not_ignored(connect, run_home):
    async with connect() as client:
        error = error_of(
            await client.call_tool("run_workflow", {"workflow_name": "test-flow", "dryRun": True})
        )
    assert error["code"] == -32602
    assert error["data"]["unexpected"] == ["dryRun"] and error["data"]["closest"] == ["dry_run"]
    assert "'dryRun' (did you mean 'dry_run'?)" in error["data"]["details"]
    assert "workflow_name" in error["data"]["accepted"]
    assert not (run_home / "runs").exists()  # nothing was started, no store was even created


@pytest.mark.parametrize(
    "tool, arguments, details",
    [
        pytest.param("run_workflow", {}, "workflow_name is required", id="missing"),
        pytest.param(
            "run_workflow",
            {"workflow_name": "test-flow", "timeout": "soon"},
            "timeout must be an integer (got a string)",
            id="ill-typed",
        ),
        pytest.param(
            "continue_workflow", {"workflow_id": "wf-1"}, "output is required", id="continue"
        ),
        pytest.param(
            "get_workflow_run",
            {"workflow_id": "wf-1", "wait_seconds": 700},
            "wait_seconds must be at most 600",
            id="range",
        ),
    ],
)
async def test_bad_run_arguments_are_explained_in_words(connect, tool, arguments, details):
    async with connect() as client:
        error = error_of(await client.call_tool(tool, arguments))
    assert error["code"] == -32602 and error["data"]["details"] == details
    assert "pydantic" not in json.dumps(error) and "validation error" not in json.dumps(error)


def request(request_id: int, method: str, params: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def tool_call(request_id: int, name: str, arguments: dict) -> str:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments})


@pytest.mark.slow
def test_run_tools_as_direct_methods_and_tools_call_same_codes(project, tmp_path):
    misspelt = {"workflow_name": "test-flow", "dryRun": True}
    not_a_run = {"workflow_id": "test-flow"}
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        [
            json.dumps(INITIALIZE),
            json.dumps(INITIALIZED),
            request(2, "run_workflow", {"workflow_name": "test-flow", "dry_run": True}),
            request(3, "run_workflow", misspelt),
            tool_call(4, "run_workflow", misspelt),
            request(5, "get_workflow_run", not_a_run),
            tool_call(6, "cancel_workflow", not_a_run),
            request(7, "continue_workflow", {**not_a_run, "output": "done"}),
            request(99, "shutdown", {}),
        ],
    )
    answers = by_id(messages)
    assert code == 0, stderr
    # Each answer in the shape its kind of call gets (a direct method's error, a tool's result);
    # said whole when not, with the server's stderr (one failed this way once in a full run).
    shapes = {2: "result", 3: "error", 4: "result", 5: "error", 6: "result", 7: "error"}
    for request_id, kind in shapes.items():
        assert kind in answers.get(request_id, {}), (request_id, answers.get(request_id), stderr)
    plan = answers[2]["result"]  # a bare result: run_workflow is a method like workflow_list
    assert plan["dry_run"] is True and plan["workflow_name"] == "test-flow"
    direct, called = (
        answers[3]["error"],
        json.loads(answers[4]["result"]["content"][0]["text"])["error"],
    )
    assert answers[4]["result"]["isError"] is True
    assert direct == called and direct["code"] == -32602
    assert direct["data"]["closest"] == ["dry_run"]
    expected = (
        "'test-flow' is a workflow id; run ids look like wf-… — call run_workflow to start one"
    )
    for answer in (
        answers[5]["error"],
        json.loads(answers[6]["result"]["content"][0]["text"])["error"],
        answers[7]["error"],
    ):
        assert answer["code"] == -32008 and answer["message"].startswith(expected), (answer, stderr)
        assert answer["data"]["workflowId"] == "test-flow"
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    "tool, arguments",
    [
        pytest.param("workflow_get", {"id": "broken-flow"}, id="get"),
        pytest.param(
            "workflow_next", {"workflowId": "broken-flow", "completedSteps": []}, id="next"
        ),
    ],
)
async def test_an_invalid_workflow_file_is_invalid_not_missing(project, connect, tool, arguments):
    broken = project / "workflows" / "broken-flow.json"
    broken.write_text('{"id": "broken-flow", "name": "Broken", "steps": "not a list"}')
    async with connect() as client:
        error = error_of(await client.call_tool(tool, arguments))
    assert error["code"] == -32002, error
    assert error["data"]["workflowId"] == "broken-flow"
    assert error["data"]["path"] == str(broken)
    assert error["data"]["diagnostics"] and "code" in error["data"]["diagnostics"][0]


async def test_instructions_and_descriptions_say_which_way_to_follow_a_workflow(catalog):
    async with Client(create_server(catalog)) as client:
        instructions = client.instructions or ""
        tools = {tool.name: tool.description for tool in (await client.list_tools()).tools}
    for words in ("workflow_next", "run_workflow", "continue_workflow", "statelessly", "wf-"):
        assert words in instructions, words
    assert "run_workflow" in tools["workflow_next"] and "Stateless" in tools["workflow_next"]
    assert "workflow_next" in tools["run_workflow"]
    assert "list_workflows" in tools["workflow_list"] and "runs" in tools["workflow_list"]
    assert (
        "workflow_list" in tools["list_workflows"]
        and "says nothing of runs" in tools["list_workflows"]
    )
    assert "workrail lint" not in " ".join(tools.values())


@pytest.mark.slow
def test_a_cancelled_run_is_one_line_on_the_servers_stderr(tmp_path):
    import subprocess
    import time

    from tests.mcp.conftest import server_command, server_env, write_workflow

    project = tmp_path / "project"
    write_workflow(
        project / "workflows",
        {
            "id": "nap-flow",
            "name": "Nap",
            "description": "sleeps",
            "version": "1.0.0",
            "steps": [{"id": "nap", "title": "nap", "run": {"command": ["sleep", "60"]}}],
        },
    )
    server = subprocess.Popen(
        server_command(project, "--allow-commands"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )

    def ask(line: str) -> dict:
        server.stdin.write(line + "\n")
        server.stdin.flush()
        wanted = json.loads(line)["id"]
        while True:
            message = json.loads(server.stdout.readline())
            if message.get("id") == wanted:
                return message

    try:
        ask(json.dumps(INITIALIZE))
        server.stdin.write(json.dumps(INITIALIZED) + "\n")
        started = ask(request(2, "run_workflow", {"workflow_name": "nap-flow", "wait_seconds": 1}))
        run_id = started["result"]["workflow_id"]
        cancelled = ask(request(3, "cancel_workflow", {"workflow_id": run_id}))
        assert cancelled["result"]["status"] == "cancelled"
        ask(request(4, "get_workflow_run", {"workflow_id": run_id, "wait_seconds": 2}))
        time.sleep(2)  # DBOS logs the run's end from its own thread, a moment later
        ask(request(99, "shutdown", {}))
        _, stderr = server.communicate(timeout=60)
    finally:
        server.kill()
    assert "Traceback" not in stderr, stderr
    about_the_run = [line for line in stderr.splitlines() if run_id in line]
    assert len(about_the_run) == 1 and about_the_run[0].endswith(f"run {run_id} was cancelled")
