"""Task-augmented tools/call (2025-11-25) for the run tools, through the real server process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    CancelTaskRequest,
    CancelTaskRequestParams,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequest,
    GetTaskPayloadRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
    PaginatedRequestParams,
)

from tests.mcp.conftest import INITIALIZE, INITIALIZED, server_command, server_env, write_workflow

pytestmark = pytest.mark.slow


def _flow(marker: str, seconds: float, steps: int) -> dict:
    return {
        "id": f"steps-{marker}",
        "name": "Steps",
        "description": "Command steps, one after another",
        "version": "1.0.0",
        "steps": [
            {
                "id": f"step-{i}",
                "title": f"Step {i}",
                "run": {
                    "command": [
                        sys.executable,
                        "-c",
                        f"import time; time.sleep({seconds})  # {marker}",
                    ],
                    "timeoutSeconds": 120,
                },
            }
            for i in range(steps)
        ],
    }


async def _connected(project, tmp_path, transport):
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "workrail_mcp", "--project", str(project), "--allow-commands"],
            env=server_env(tmp_path),
            cwd=str(tmp_path),
        )
        return Client(params, mode="legacy")
    raise AssertionError(transport)


_REQUESTS = {
    "tools/call": (CallToolRequest, CallToolRequestParams),
    "tasks/get": (GetTaskRequest, GetTaskRequestParams),
    "tasks/result": (GetTaskPayloadRequest, GetTaskPayloadRequestParams),
    "tasks/cancel": (CancelTaskRequest, CancelTaskRequestParams),
    "tasks/list": (ListTasksRequest, PaginatedRequestParams),
}


async def _send(client, method: str, params: dict, result_type):
    """A request the SDK's client has types for but no call (tasks, task-augmented calls)."""
    if "task" in params:
        # The client checks a tools/call answer against CallToolResult whatever was asked; a
        # task-augmented call is answered with a task, so it goes through the raw channel.
        raw = await client.session._dispatcher.send_raw_request(method, params, None)
        return result_type.model_validate(raw)
    request, request_params = _REQUESTS[method]
    typed = request(params=request_params.model_validate(params))
    return await client.session.send_request(typed, result_type)


async def _start_task(client, workflow_name: str) -> str:
    """run_workflow as a task; the task's id (it must start as working)."""
    created = await _send(
        client,
        "tools/call",
        {"name": "run_workflow", "arguments": {"workflow_name": workflow_name}, "task": {}},
        CreateTaskResult,
    )
    assert created.task.status == "working"
    return created.task.task_id


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


async def test_a_run_as_a_task_polled_to_completion(project, tmp_path):
    write_workflow(project / "workflows", _flow("poll", 0.3, 3))
    async with await _connected(project, tmp_path, "stdio") as client:
        assert client.server_capabilities.tasks is not None
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["run_workflow"].execution.task_support == "optional"
        task_id = await _start_task(client, "steps-poll")
        with anyio.fail_after(60):
            while True:
                got = await _send(client, "tasks/get", {"taskId": task_id}, GetTaskResult)
                if got.status != "working":
                    break
                await anyio.sleep(0.2)
        assert got.status == "completed"
        result = await _send(client, "tasks/result", {"taskId": task_id}, CallToolResult)
        assert result.structured_content["status"] == "success"
        assert result.structured_content["steps_completed"] == 3
        listed = await _send(client, "tasks/list", {}, ListTasksResult)
        assert task_id in {t.task_id for t in listed.tasks}


async def test_a_cancelled_task_cancels_the_run_and_its_processes(project, tmp_path):
    marker = f"cancel-{os.getpid()}-{time.monotonic_ns()}"
    write_workflow(project / "workflows", {**_flow(marker, 60, 1), "id": "steps-cancel"})
    async with await _connected(project, tmp_path, "stdio") as client:
        task_id = await _start_task(client, "steps-cancel")
        with anyio.fail_after(30):
            while not _processes_with(marker):
                await anyio.sleep(0.1)
        cancelled = await _send(client, "tasks/cancel", {"taskId": task_id}, CancelTaskResult)
        assert cancelled.status == "cancelled"
        began = time.monotonic()
        while _processes_with(marker) and time.monotonic() - began < 5:
            await anyio.sleep(0.1)
        assert _processes_with(marker) == [], "the step's process outlived the cancel by 5 s"
        got = await _send(client, "tasks/get", {"taskId": task_id}, GetTaskResult)
        assert got.status == "cancelled"


def test_status_notifications_per_step(project, tmp_path):
    """The SDK's client drops notifications/tasks/status (its method table leaves them out on
    purpose), so this reads the process's raw stdout lines."""
    write_workflow(project / "workflows", _flow("notify", 0.8, 3))
    process = subprocess.Popen(
        server_command(project, "--allow-commands"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(tmp_path),
        cwd=tmp_path,
        text=True,
    )
    try:

        def send(message: dict) -> None:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()

        send({**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2025-11-25"}})
        send(INITIALIZED)
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "run_workflow",
                    "arguments": {"workflow_name": "steps-notify"},
                    "task": {"ttl": 60000},
                },
            }
        )
        statuses = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            assert line, "the server closed its stdout"
            message = json.loads(line)
            if message.get("id") == 2:
                assert message["result"]["task"]["status"] == "working"
            if message.get("method") == "notifications/tasks/status":
                statuses.append(message["params"])
                if message["params"]["status"] != "working":
                    break
        assert statuses[-1]["status"] == "completed", statuses
        said = [s.get("statusMessage", "") for s in statuses]
        assert "run running: 1/3 steps" in said and "run running: 2/3 steps" in said, said
        assert said[-1] == "run success: 3/3 steps"
    finally:
        process.kill()
        process.wait()
        process.stdin.close()
        process.stdout.close()
