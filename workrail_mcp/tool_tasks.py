"""Task-augmented ``tools/call`` (revision 2025-11-25) for the run tools, mapped onto the run.

A client that adds ``task: {ttl?}`` to a ``tools/call`` of ``run_workflow`` or
``continue_workflow`` gets a task at once (``CreateTaskResult``, status ``working``); the tool is
started with ``wait_seconds: 0`` (so the run's id is known at once) and the task then follows the
run's own step events: each step's start and end is a ``notifications/tasks/status`` naming the
step, in the order they happened (none lost to a step shorter than a read), and the task ends
when the run no longer runs (it finished, failed, was cancelled, or waits for the agent — the
result says which and what to do). ``tasks/get``, ``tasks/list``, ``tasks/result`` (waits for the
end) and ``tasks/cancel`` (= ``cancel_workflow`` on the run) answer from here.

Tasks live in this server process (a restarted server forgets them; the runs themselves are
durable and ``get_workflow_run`` still finds them). At most ``MAX_TASKS`` are kept, and at most
``MAX_TASKS_PER_CLIENT`` of one connection: past its share a connection loses its own oldest
task (an ended one first), and a full table loses one of the connection holding the most — so a
flood of tasks forgets only the flooder's own; a task is forgotten ``ttl`` ms after it was created (the client's,
at most ``MAX_TTL_MS``; ``DEFAULT_TTL_MS`` when it asks none: a task always says its ttl, and
the SDK's models of the notification need a number there).

A task answers only to the client connection that created it (over HTTP its MCP session, over
stdio the one client): to any other, ``tasks/get``, ``tasks/result`` and ``tasks/cancel`` answer
as for an unknown task id, and ``tasks/list`` shows only the caller's own tasks. A client on a
shared server can then neither read another's run through its task nor cancel it.
"""

from __future__ import annotations

import datetime
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from mcp import MCPError
from mcp_types import TaskStatusNotification, TaskStatusNotificationParams

from workrail_mcp.error_mapping import invalid_params
from workrail_mcp.request_outliving import OutlivesRequests

if TYPE_CHECKING:
    from workrail_engine.runs.service import RunService
    from workrail_engine.runs.step_events import StepFeedRead

__all__ = ["TASK_TOOLS", "TASKS_SINCE", "ToolTasks"]

TASKS_SINCE = "2025-11-25"  # the revision that has tasks (2026-07-28 dropped them)
TASK_TOOLS = ("run_workflow", "continue_workflow")
MAX_TASKS = 1000
MAX_TASKS_PER_CLIENT = 100
DEFAULT_TTL_MS = 3_600_000  # an hour
MAX_TTL_MS = 86_400_000  # a day
POLL_MS = 500
# A task follows its run's step events (`RunService.step_events`); with none for this long it
# reads the run itself (a run executing in another process, or one that stopped).
STATUS_CHECK_SECONDS = 2.0
START_WAIT_SECONDS = 30.0  # how long tasks/cancel waits for the run tool to name its run
_TERMINAL = ("completed", "failed", "cancelled")
_RUNNING = ("pending", "running", "enqueued")
RELATED_TASK = "io.modelcontextprotocol/related-task"

logger = logging.getLogger(__name__)

CallTool = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def step_message(event: Mapping[str, Any]) -> str:
    """A step event as a task's status message: the step's name (its key) and what happened."""
    step = event["step"]
    title = f" ({event['title']})" if event.get("title") else ""
    if event["event"] == "started":
        return f"step {step}{title} started"
    if event["event"] == "waiting":
        return f"step {step}{title} waits for the agent"
    return f"step {step} ended: {event.get('status')}"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")


def _connection_of(session: Any) -> object:
    """What tells the server's client connections apart: the client's ``initialize`` params, one
    object per connection (an HTTP MCP session, the stdio client) that every request of the
    connection shares. Held, not its ``id()``, so a closed connection's id cannot be reused."""
    return session.client_params


@dataclass
class _Entry:
    task: dict[str, Any]
    session: Any
    owner: object  # `_connection_of` the session that created it
    expires: float  # time.monotonic() when the task is forgotten
    run_id: str | None = None
    result: dict[str, Any] | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    started: anyio.Event = field(default_factory=anyio.Event)  # the tool answered: run_id is known
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


def _structured(result: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(result.get("structuredContent"), dict):
        return dict(result["structuredContent"])
    try:
        return dict(json.loads(result["content"][0]["text"]))
    except (KeyError, IndexError, ValueError, TypeError):
        return {}


class ToolTasks(OutlivesRequests):
    def __init__(self, call_tool: CallTool, runs: Callable[[], RunService]) -> None:
        """``call_tool``: the server's tools by name; ``runs``: the run service (step events)."""
        self._call_tool = call_tool
        self._runs = runs
        self._entries: dict[str, _Entry] = {}

    # --- tools/call with a task -------------------------------------------------------------
    def start(self, ctx: Any, name: str, arguments: dict[str, Any], meta: Any) -> dict[str, Any]:
        if not self.serving:
            raise MCPError(code=-32603, message="Internal error", data={"details": "no tasks"})
        ttl = meta.get("ttl") if isinstance(meta, Mapping) else None
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl <= 0:
            ttl = DEFAULT_TTL_MS
        now = _now()
        entry = _Entry(
            task={
                "taskId": "task-" + uuid.uuid4().hex[:16],
                "status": "working",
                "createdAt": now,
                "lastUpdatedAt": now,
                "ttl": min(ttl, MAX_TTL_MS),
                "pollInterval": POLL_MS,
            },
            session=ctx.session,
            owner=_connection_of(ctx.session),
            expires=0.0,
        )
        entry.expires = time.monotonic() + entry.task["ttl"] / 1000
        self._forget_old(entry.owner)
        self._entries[entry.task["taskId"]] = entry
        self.start_soon(self._follow, entry, name, dict(arguments))
        return {"task": dict(entry.task)}

    async def _follow(self, entry: _Entry, name: str, arguments: dict[str, Any]) -> None:
        with entry.scope:
            try:
                await self._follow_run(entry, name, arguments)
            except Exception:
                logger.exception("task %s failed", entry.task["taskId"])
                entry.result = {
                    "content": [{"type": "text", "text": "internal error"}],
                    "isError": True,
                }
                await self._update(entry, "failed", "internal error")
        entry.started.set()
        entry.done.set()

    async def _follow_run(self, entry: _Entry, name: str, arguments: dict[str, Any]) -> None:
        """Start the tool, then follow the run's own step events until it stops running: each
        step's start and end is one status notification, in order, however short the step."""
        cursor = 0  # run_workflow: the run's feed opens before its first step
        answered = arguments.get("workflow_id") if name == "continue_workflow" else None
        if isinstance(answered, str):
            cursor = await anyio.to_thread.run_sync(self._runs().step_cursor, answered)
        # The run tools' wait_seconds: 0 gives the run's id at once (a session's answer, by
        # continueToken, has no run to follow and is the result itself).
        if name == "run_workflow" or "workflow_id" in arguments:
            arguments = {**arguments, "wait_seconds": 0}
        result = await self._call_tool(name, arguments)
        state = _structured(result)
        entry.run_id = state.get("workflow_id") if state.get("status") else None
        entry.started.set()
        running = bool(entry.run_id) and not result.get("isError")
        while running and state.get("status") in _RUNNING:
            read = await self._tell_steps(entry, cursor, STATUS_CHECK_SECONDS)
            cursor = read.cursor
            stops = read.closed or any(e["event"] == "waiting" for e in read.events)
            if stops or not read.events:  # the run may have stopped (or runs elsewhere): ask it
                result = await self._call_tool(
                    "get_workflow_run", {"workflow_id": entry.run_id, "wait_seconds": 0}
                )
                state = _structured(result)
                if read.closed and state.get("status") in _RUNNING:
                    await anyio.sleep(0.1)  # its summary is being stored
        if running:  # the steps of a run that ended before it was first looked at
            await self._tell_steps(entry, cursor, 0)
        entry.result = result
        await self._update(entry, _task_status(result, state), _progress(state))

    async def _tell_steps(self, entry: _Entry, cursor: int, seconds: float) -> StepFeedRead:
        """The run's step events after ``cursor`` (waiting up to ``seconds``), each sent."""
        read = await anyio.to_thread.run_sync(
            self._runs().step_events, entry.run_id, cursor, seconds, abandon_on_cancel=True
        )
        if read.missed:
            await self._update(entry, "working", f"{read.missed} step events not shown")
        for event in read.events:
            await self._update(entry, "working", step_message(event))
        return read

    async def _update(self, entry: _Entry, status: str, message: str | None) -> None:
        if entry.task["status"] in _TERMINAL:
            return
        entry.task.update(status=status, lastUpdatedAt=_now())
        if message:
            entry.task["statusMessage"] = message
        try:
            params = TaskStatusNotificationParams.model_validate(entry.task)
            await entry.session.send_notification(TaskStatusNotification(params=params))
        except Exception:  # the client went away; the task goes on
            logger.debug("task status not delivered", exc_info=True)

    # --- tasks/* ----------------------------------------------------------------------------
    def _entry(self, ctx: Any, params: Any) -> _Entry:
        """The caller's task named in ``params``; another connection's is as unknown as a
        made-up id (the same error), so its existence is not told either."""
        task_id = params.get("taskId") if isinstance(params, Mapping) else None
        entry = self._entries.get(task_id) if isinstance(task_id, str) else None
        if entry is None or entry.owner is not _connection_of(ctx.session):
            raise invalid_params(f"no task {task_id!r}")
        return entry

    def get(self, ctx: Any, params: Any) -> dict[str, Any]:
        return dict(self._entry(ctx, params).task)

    def list(self, ctx: Any) -> dict[str, Any]:
        caller = _connection_of(ctx.session)
        return {"tasks": [dict(e.task) for e in self._entries.values() if e.owner is caller]}

    async def result(self, ctx: Any, params: Any) -> dict[str, Any]:
        entry = self._entry(ctx, params)
        await entry.done.wait()
        result = dict(entry.result or {})
        result["_meta"] = {RELATED_TASK: {"taskId": entry.task["taskId"]}}
        return result

    async def cancel(self, ctx: Any, params: Any) -> dict[str, Any]:
        entry = self._entry(ctx, params)
        # A cancel right after the start: the run may be executing before the tool has said
        # which run it is; without its id it could not be stopped.
        with anyio.move_on_after(START_WAIT_SECONDS):
            await entry.started.wait()
        if entry.task["status"] in _TERMINAL:
            raise invalid_params(f"task {entry.task['taskId']} is already {entry.task['status']}")
        if entry.run_id:
            await self._call_tool(
                "cancel_workflow", {"workflow_id": entry.run_id, "reason": "task cancelled"}
            )
        entry.scope.cancel()
        entry.result = {"content": [{"type": "text", "text": "cancelled"}], "isError": True}
        await self._update(entry, "cancelled", "cancelled by the client")
        entry.done.set()
        return dict(entry.task)

    def _forget_old(self, owner: object) -> None:
        """The expired tasks; then room for one more task of ``owner``'s (see the module's
        docstring): its own oldest past its share, else one of the largest holder's when full."""
        now = time.monotonic()
        for key in [k for k, e in self._entries.items() if now >= e.expires]:
            self._forget(key)
        held: dict[int, list[str]] = {}  # by id(): the entries keep every owner alive
        for key, entry in self._entries.items():
            held.setdefault(id(entry.owner), []).append(key)
        own = held.get(id(owner), [])
        if len(own) >= MAX_TASKS_PER_CLIENT:
            self._forget(self._oldest(own))
        elif len(self._entries) >= MAX_TASKS:
            self._forget(self._oldest(max(held.values(), key=len)))

    def _oldest(self, keys: list[str]) -> str:
        """The oldest ended task of ``keys`` (in creation order), else the oldest."""
        ended = [k for k in keys if self._entries[k].task["status"] in _TERMINAL]
        return (ended or keys)[0]

    def _forget(self, key: str) -> None:
        entry = self._entries.pop(key)
        entry.scope.cancel()  # its run goes on (cancel_workflow stops it); the task is gone


def _progress(state: Mapping[str, Any]) -> str | None:
    if "steps_completed" not in state:
        return None
    return f"run {state.get('status')}: {state.get('steps_completed')}/{state.get('steps_total')} steps"


def _task_status(result: Mapping[str, Any], state: Mapping[str, Any]) -> str:
    if result.get("isError") or state.get("status") == "failed":
        return "failed"
    if state.get("status") == "cancelled":
        return "cancelled"
    return "completed"
