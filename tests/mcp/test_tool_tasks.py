"""Task-augmented tools/call (2025-11-25) for the run tools, through the real server process over
stdio and Streamable HTTP, with the SDK's client.

Two gaps of the SDK 2.3 client, and what the tests use instead:
- it checks every ``tools/call`` answer against ``CallToolResult`` (a task-augmented call is
  answered with ``CreateTaskResult``), so that one call goes through its session's private
  ``_dispatcher.send_raw_request`` (modelcontextprotocol/python-sdk PR #3161, open, lets the
  public call take it); every other request uses the public ``session.send_request``;
- its method tables leave ``notifications/tasks/status`` out on purpose, so the public
  extension hook (`ClientExtension.notifications`, SEP-2133) observes them; it may hand
  near-simultaneous notifications over out of wire order, so their order is read from the
  server's ``lastUpdatedAt``, and the stdio test also reads the wire itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace

import anyio
import pytest
import pytest_asyncio
from mcp import Client, MCPError
from mcp.client.extension import ClientExtension, NotificationBinding
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
    TaskStatusNotificationParams,
)

from tests.mcp.conftest import server_command, server_env, stdio_parameters, write_workflow
from tests.mcp.messages import INITIALIZE, INITIALIZED
from tests.mcp.shared_server import kept_open
from tests.mcp.test_http import http_server
from workrail_mcp import tool_tasks

# Every test but the raw wire's talks to one of the module's two kept `--allow-commands` servers
# (one over stdio, one over HTTP): a start that opens the run store is ≈ 2 s of CPU (the SDK,
# DBOS), and no test here is about a fresh process. Each test has workflows of its own, written
# before the servers start (a request answers from the catalog's current snapshot), and tells
# its runs and tasks apart by their ids; a cancelled step's process is found by its marker.
pytestmark = pytest.mark.slow
# The tests on the kept servers run in the module's event loop, as the kept stdio client does.
IN_THE_MODULES_LOOP = pytest.mark.asyncio(loop_scope="module")


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


class TaskStatuses(ClientExtension):
    """Keeps the ``notifications/tasks/status`` the server sends (see the module's note)."""

    identifier = "io.github.workrail-tests/task-status"

    def __init__(self) -> None:
        self.seen: list[TaskStatusNotificationParams] = []

    def notifications(self):
        return [
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=TaskStatusNotificationParams,
                handler=self._got,
            )
        ]

    async def _got(self, params: TaskStatusNotificationParams) -> None:
        self.seen.append(params)

    def of(self, task_id: str) -> list[TaskStatusNotificationParams]:
        return sorted(
            (s for s in self.seen if s.task_id == task_id), key=lambda s: s.last_updated_at
        )


def _marker(name: str) -> str:
    """A word no other process of this machine has on its command line."""
    return f"{name}-{os.getpid()}-{time.monotonic_ns()}"


def _answered_flow() -> dict:
    """steps-after: a command step, a prompt step, then two command steps."""
    flow = _flow("after", 0, 2)
    flow["steps"] = [
        {**flow["steps"][0], "id": "before", "title": "Before"},
        {"id": "ask", "title": "Ask", "prompt": "Say done."},
        *flow["steps"],
    ]
    return flow


MARKERS = {
    name: _marker(name) for name in ("cancel-stdio", "cancel-http", "at-once", "another-client")
}
# Steps far shorter than any polling of the run would see: each must still be named.
FAST_STEPS = 6
FLOWS = [
    _flow("poll", 0.3, 3),
    *(
        {**_flow(MARKERS[f"cancel-{t}"], 60, 1), "id": f"steps-cancel-{t}"}
        for t in ("stdio", "http")
    ),
    {**_flow(MARKERS["at-once"], 60, 1), "id": "steps-at-once"},
    {**_flow(MARKERS["another-client"], 60, 1), "id": "steps-another-client"},
    _flow("notify", 0, FAST_STEPS),
    _flow("quick", 0, 1),
    _answered_flow(),
]


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tool-tasks") / "project"
    for flow in FLOWS:
        write_workflow(root / "workflows", flow)
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kept_stdio(
    shared_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[Client, TaskStatuses]]:
    """The kept stdio server's one client, and the task statuses it was sent."""
    statuses = TaskStatuses()
    params = stdio_parameters(shared_project, tmp_path_factory.mktemp("stdio"), "--allow-commands")
    async with kept_open(lambda: Client(params, mode="legacy", extensions=[statuses])) as client:
        yield client, statuses


@pytest.fixture(scope="module")
def kept_http(shared_project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The kept HTTP server's URL (each test connects a client of its own)."""
    home = tmp_path_factory.mktemp("http")
    with http_server(shared_project, home, "--allow-commands") as (url, _):
        yield url


@pytest.fixture
def connected(kept_stdio: tuple[Client, TaskStatuses], kept_http: str):
    """``connected(transport, statuses=...)``: a client of the kept server of that transport and
    the task statuses it is sent — over stdio the kept client's own (one client per process
    there), over HTTP a new client's, observed only when asked for (``statuses=True``)."""

    @asynccontextmanager
    async def connect(
        transport: str, statuses: bool = False
    ) -> AsyncIterator[tuple[Client, TaskStatuses]]:
        if transport == "stdio":
            yield kept_stdio
            return
        seen = TaskStatuses()
        extensions = {"extensions": [seen]} if statuses else {}
        async with Client(kept_http, mode="legacy", **extensions) as client:
            yield client, seen

    return connect


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


TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


@IN_THE_MODULES_LOOP
@TRANSPORTS
async def test_a_run_as_a_task_polled_to_completion(connected, transport):
    async with connected(transport) as (client, _):
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


@IN_THE_MODULES_LOOP
@TRANSPORTS
async def test_a_cancelled_task_cancels_the_run_and_its_processes(connected, transport):
    marker = MARKERS[f"cancel-{transport}"]
    async with connected(transport) as (client, _):
        task_id = await _start_task(client, f"steps-cancel-{transport}")
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


@IN_THE_MODULES_LOOP
async def test_another_http_client_can_neither_see_read_nor_cancel_a_task(connected):
    """Two clients of one HTTP server (two MCP sessions): B is told of A's task what it is told
    of a made-up id, and A's run goes on."""
    marker = MARKERS["another-client"]
    async with connected("http") as (alice, _), connected("http") as (bob, _):
        task_id = await _start_task(alice, "steps-another-client")
        with anyio.fail_after(30):
            while not _processes_with(marker):
                await anyio.sleep(0.1)
        listed = await _send(bob, "tasks/list", {}, ListTasksResult)
        assert task_id not in {t.task_id for t in listed.tasks}
        unknown = "task-0000000000000000"
        for method, result_type in (
            ("tasks/get", GetTaskResult),
            ("tasks/result", CallToolResult),
            ("tasks/cancel", CancelTaskResult),
        ):
            with pytest.raises(MCPError) as refused:
                await _send(bob, method, {"taskId": task_id}, result_type)
            with pytest.raises(MCPError) as made_up:
                await _send(bob, method, {"taskId": unknown}, result_type)
            assert refused.value.error.code == made_up.value.error.code == -32602
            assert refused.value.error.message == made_up.value.error.message.replace(
                unknown, task_id
            )
        got = await _send(alice, "tasks/get", {"taskId": task_id}, GetTaskResult)
        assert got.status == "working"
        assert _processes_with(marker), "another client's tasks/cancel stopped the run"
        listed = await _send(alice, "tasks/list", {}, ListTasksResult)
        assert task_id in {t.task_id for t in listed.tasks}
        cancelled = await _send(alice, "tasks/cancel", {"taskId": task_id}, CancelTaskResult)
        assert cancelled.status == "cancelled"


@IN_THE_MODULES_LOOP
async def test_a_flood_of_tasks_forgets_only_the_flooders_own(connected):
    """B sends one task more than a connection's share (tasks that fail at once: a token that is
    none): B keeps its share, and A's ended task, older than all of them, is still there."""
    async with connected("http") as (alice, _), connected("http") as (bob, _):
        task_id = await _start_task(alice, "steps-quick")
        done = await _send(alice, "tasks/result", {"taskId": task_id}, CallToolResult)
        assert done.structured_content["status"] == "success"
        flood = {"name": "continue_workflow", "arguments": {"continueToken": "x"}, "task": {}}
        for _ in range(tool_tasks.MAX_TASKS_PER_CLIENT + 1):
            await _send(bob, "tools/call", flood, CreateTaskResult)
        listed = await _send(bob, "tasks/list", {}, ListTasksResult)
        assert len(listed.tasks) == tool_tasks.MAX_TASKS_PER_CLIENT
        got = await _send(alice, "tasks/get", {"taskId": task_id}, GetTaskResult)
        assert got.status == "completed"


class _Connection:
    """A stand-in for a connection's session: its own initialize params, notifications dropped."""

    def __init__(self) -> None:
        self.client_params = object()

    async def send_notification(self, notification: object) -> None:
        return None


async def test_a_full_task_table_forgets_a_task_of_the_connection_holding_the_most(monkeypatch):
    monkeypatch.setattr(tool_tasks, "MAX_TASKS", 6)
    monkeypatch.setattr(tool_tasks, "MAX_TASKS_PER_CLIENT", 4)

    async def failing_tool(name: str, arguments: dict) -> dict:
        return {"content": [{"type": "text", "text": "no"}], "isError": True}

    tasks = tool_tasks.ToolTasks(failing_tool, lambda: None)  # type: ignore[arg-type,return-value]
    alice, bob, carol = (SimpleNamespace(session=_Connection()) for _ in range(3))

    def start(ctx: SimpleNamespace) -> str:
        return tasks.start(ctx, "run_workflow", {}, {})["task"]["taskId"]

    async with tasks.running():
        first = start(alice)
        for ctx, count in ((bob, 4), (carol, 1), (carol, 1), (bob, 1)):
            for _ in range(count):
                start(ctx)
        held = [len(tasks.list(ctx)["tasks"]) for ctx in (alice, bob, carol)]
        assert held == [1, 3, 2]  # the table was full twice: bob lost one each time
        assert tasks.get(alice, {"taskId": first})["taskId"] == first


def _expected_messages(steps: int) -> list[str]:
    said = []
    for i in range(steps):
        said += [f"step step-{i} (Step {i}) started", f"step step-{i} ended: success"]
    return said


@IN_THE_MODULES_LOOP
async def test_status_notifications_name_every_step_over_http(connected):
    async with connected("http", statuses=True) as (client, statuses):
        task_id = await _start_task(client, "steps-notify")
        result = await _send(client, "tasks/result", {"taskId": task_id}, CallToolResult)
        assert result.structured_content["status"] == "success"
        with anyio.fail_after(10):  # the last notification may trail the result
            while not statuses.of(task_id) or statuses.of(task_id)[-1].status == "working":
                await anyio.sleep(0.05)
    seen = statuses.of(task_id)
    said = [s.status_message for s in seen]
    assert said[:-1] == _expected_messages(FAST_STEPS), said
    assert seen[-1].status == "completed" and said[-1] == "run success: 6/6 steps"


def test_status_notifications_per_step(project, tmp_path):
    """The wire itself, in order: a fresh process's raw stdout lines."""
    write_workflow(project / "workflows", _flow("notify", 0, FAST_STEPS))
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
        assert said == [*_expected_messages(FAST_STEPS), "run success: 6/6 steps"], said
    finally:
        process.kill()
        process.wait()
        process.stdin.close()
        process.stdout.close()


@IN_THE_MODULES_LOOP
async def test_a_task_cancelled_at_once_still_stops_its_run(connected):
    """tasks/cancel before the run tool has even said which run it started."""
    marker = MARKERS["at-once"]
    async with connected("stdio") as (client, _):
        task_id = await _start_task(client, "steps-at-once")
        cancelled = await _send(client, "tasks/cancel", {"taskId": task_id}, CancelTaskResult)
        assert cancelled.status == "cancelled"
        began = time.monotonic()
        while time.monotonic() - began < 8:  # long enough for the step to have started
            assert time.monotonic() - began < 5 or _processes_with(marker) == [], (
                "the step's process outlived the cancel by 5 s"
            )
            await anyio.sleep(0.2)
        assert _processes_with(marker) == []


@IN_THE_MODULES_LOOP
async def test_an_answer_as_a_task_names_the_steps_after_it(connected):
    """continue_workflow as a task: the answered step's end and the steps it lets run, and none
    of the steps before the answer."""
    async with connected("stdio") as (client, statuses):
        waiting = await client.call_tool("run_workflow", {"workflow_name": "steps-after"})
        assert waiting.structured_content["status"] == "waiting"
        run_id = waiting.structured_content["workflow_id"]
        created = await _send(
            client,
            "tools/call",
            {
                "name": "continue_workflow",
                "arguments": {"workflow_id": run_id, "output": "done"},
                "task": {},
            },
            CreateTaskResult,
        )
        task_id = created.task.task_id
        result = await _send(client, "tasks/result", {"taskId": task_id}, CallToolResult)
        assert result.structured_content["status"] == "success"
        with anyio.fail_after(10):
            while not statuses.of(task_id) or statuses.of(task_id)[-1].status == "working":
                await anyio.sleep(0.05)
    said = [s.status_message for s in statuses.of(task_id)]
    assert said == ["step ask ended: success", *_expected_messages(2), "run success: 4/4 steps"]
