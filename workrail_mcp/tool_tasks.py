"""Task-augmented ``tools/call`` (revision 2025-11-25) for the run tools, mapped onto the run.

A client that adds ``task: {ttl?}`` to a ``tools/call`` of ``run_workflow`` or
``continue_workflow`` gets a task at once (``CreateTaskResult``, status ``working``); the tool is
started with ``wait_seconds: 0`` (so the run's id is known at once) and the task then follows the
run: each change of its completed steps is a ``notifications/tasks/status``, and the task ends
when the run no longer runs (it finished, failed, was cancelled, or waits for the agent — the
result says which and what to do). ``tasks/get``, ``tasks/list``, ``tasks/result`` (waits for the
end) and ``tasks/cancel`` (= ``cancel_workflow`` on the run) answer from here.

Tasks live in this server process (a restarted server forgets them; the runs themselves are
durable and ``get_workflow_run`` still finds them). At most ``MAX_TASKS`` are kept, the oldest
finished ones dropped first.
"""

from __future__ import annotations

import datetime
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import MCPError
from mcp_types import TaskStatusNotification, TaskStatusNotificationParams

from workrail_mcp.error_mapping import invalid_params

__all__ = ["TASK_TOOLS", "TASKS_SINCE", "ToolTasks"]

TASKS_SINCE = "2025-11-25"  # the revision that has tasks (2026-07-28 dropped them)
TASK_TOOLS = ("run_workflow", "continue_workflow")
MAX_TASKS = 1000
POLL_MS = 500
FOLLOW_SECONDS = 0.2  # how often a task reads its run (a step shorter than this may go unnamed)
_TERMINAL = ("completed", "failed", "cancelled")
_RUNNING = ("pending", "running", "enqueued")
RELATED_TASK = "io.modelcontextprotocol/related-task"

logger = logging.getLogger(__name__)

CallTool = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")


@dataclass
class _Entry:
    task: dict[str, Any]
    session: Any
    run_id: str | None = None
    result: dict[str, Any] | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


def _structured(result: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(result.get("structuredContent"), dict):
        return dict(result["structuredContent"])
    try:
        return dict(json.loads(result["content"][0]["text"]))
    except (KeyError, IndexError, ValueError, TypeError):
        return {}


class ToolTasks:
    def __init__(self, call_tool: CallTool) -> None:
        self._call_tool = call_tool
        self._entries: dict[str, _Entry] = {}
        self._group: Any = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The server's lifespan: tasks outlive the request that started them, not the server."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    # --- tools/call with a task -------------------------------------------------------------
    def start(self, ctx: Any, name: str, arguments: dict[str, Any], meta: Any) -> dict[str, Any]:
        if self._group is None:
            raise MCPError(code=-32603, message="Internal error", data={"details": "no tasks"})
        ttl = meta.get("ttl") if isinstance(meta, Mapping) else None
        now = _now()
        entry = _Entry(
            task={
                "taskId": "task-" + uuid.uuid4().hex[:16],
                "status": "working",
                "createdAt": now,
                "lastUpdatedAt": now,
                "ttl": ttl if isinstance(ttl, int) else None,
                "pollInterval": POLL_MS,
            },
            session=ctx.session,
        )
        self._forget_old()
        self._entries[entry.task["taskId"]] = entry
        self._group.start_soon(self._follow, entry, name, dict(arguments))
        return {"task": dict(entry.task)}

    async def _follow(self, entry: _Entry, name: str, arguments: dict[str, Any]) -> None:
        with entry.scope:
            try:
                # The run tools' wait_seconds: 0 gives the run's id at once (a session's answer,
                # by continueToken, has no run to follow and is the result itself).
                if name == "run_workflow" or "workflow_id" in arguments:
                    arguments = {**arguments, "wait_seconds": 0}
                result = await self._call_tool(name, arguments)
                state = _structured(result)
                entry.run_id = state.get("workflow_id") if state.get("status") else None
                while (
                    entry.run_id and state.get("status") in _RUNNING and not result.get("isError")
                ):
                    seen = (state.get("status"), state.get("steps_completed"))
                    await anyio.sleep(FOLLOW_SECONDS)
                    result = await self._call_tool(
                        "get_workflow_run", {"workflow_id": entry.run_id, "wait_seconds": 0}
                    )
                    state = _structured(result)
                    if (state.get("status"), state.get("steps_completed")) != seen:
                        await self._update(entry, "working", _progress(state))
                entry.result = result
                await self._update(entry, _task_status(result, state), _progress(state))
            except Exception:
                logger.exception("task %s failed", entry.task["taskId"])
                entry.result = {
                    "content": [{"type": "text", "text": "internal error"}],
                    "isError": True,
                }
                await self._update(entry, "failed", "internal error")
        entry.done.set()

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
    def _entry(self, params: Any) -> _Entry:
        task_id = params.get("taskId") if isinstance(params, Mapping) else None
        entry = self._entries.get(task_id) if isinstance(task_id, str) else None
        if entry is None:
            raise invalid_params(f"no task {task_id!r}")
        return entry

    def get(self, params: Any) -> dict[str, Any]:
        return dict(self._entry(params).task)

    def list(self) -> dict[str, Any]:
        return {"tasks": [dict(entry.task) for entry in self._entries.values()]}

    async def result(self, params: Any) -> dict[str, Any]:
        entry = self._entry(params)
        await entry.done.wait()
        result = dict(entry.result or {})
        result["_meta"] = {RELATED_TASK: {"taskId": entry.task["taskId"]}}
        return result

    async def cancel(self, params: Any) -> dict[str, Any]:
        entry = self._entry(params)
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

    def _forget_old(self) -> None:
        while len(self._entries) >= MAX_TASKS:
            finished = [k for k, e in self._entries.items() if e.task["status"] in _TERMINAL]
            self._entries.pop(finished[0] if finished else next(iter(self._entries)))


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
