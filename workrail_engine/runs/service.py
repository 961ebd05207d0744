"""`RunService`: start, watch, continue, cancel and list runs — the one facade the MCP tools and the
CLI call. Synchronous (DBOS's calls refuse to run on an event loop); async callers use a thread.

DBOS is imported and launched on first need (`start()`), never at import, so a server answers
``initialize`` before any of it happens.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contracts import check_step_artifacts
from ..declared import declared_secrets
from ..errors import InvalidParams, InvalidRunState, RunNotFound, SecurityViolation, StorageError
from ..rules import validate_output
from ..steps import find_step
from .commands import AttemptSettings
from .model import ACTIVE, TERMINAL, executable_steps, run_input, run_result
from .params import check_parameters
from .plan import has_commands, plan_run, sandbox_wanted
from .resolve import database_url, store_home
from .secrets import SecretSet
from .walker import condition_context
from .workspace import check_sandbox

if TYPE_CHECKING:
    from .durable import DurableRuntime

__all__ = ["RunOptions", "RunService"]

_DBOS_STATUS = {
    "SUCCESS": None,
    "ERROR": "failed",
    "CANCELLED": "cancelled",
    "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "failed",
}


@dataclass
class RunOptions:
    timeout: float | None = None
    parallel_limit: int | None = None
    context: dict[str, Any] = field(default_factory=dict)


class RunService:
    def __init__(
        self,
        project: Path,
        *,
        allow_commands: bool,
        sandbox: bool = False,
        home: Path | None = None,
        database: str | None = None,
        server: bool = False,
    ) -> None:
        """``server``: this process serves clients and should end promptly when asked to, even
        with runs in flight (see `DurableRuntime.exit_promptly_on_shutdown`)."""
        self.project = project
        self.settings = AttemptSettings(
            project=project, allow_commands=allow_commands, sandbox=sandbox
        )
        self.home = home
        self.database = database
        self.server = server
        # DBOS in this process and everything the runs share; every DBOS call goes through it.
        self.runtime: DurableRuntime | None = None
        self._lock = threading.Lock()
        self._inputs: dict[str, dict[str, Any]] = {}

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Launch the durable layer (and recover dead processes' runs); idempotent."""
        with self._lock:
            if self.runtime is None:
                from . import durable

                home = self.home or store_home()
                try:
                    runtime = durable.launch(home, self.database or database_url(), self.settings)
                except RuntimeError as exc:  # DBOS is one per process, on one store
                    raise StorageError(str(exc)) from None
                if self.server:
                    runtime.exit_promptly_on_shutdown()
                self.runtime = runtime

    def close(self) -> None:
        """Stop the durable layer of this process (tests, embedding); `start()` may follow."""
        with self._lock:
            if self.runtime is not None:
                self.runtime.shutdown()
                self.runtime = None

    @property
    def started(self) -> bool:
        return self.runtime is not None

    @property
    def executor_id(self) -> str | None:
        return self.runtime.executor_id if self.runtime is not None else None

    def _runtime(self) -> DurableRuntime:
        """The runtime, launched on first need."""
        self.start()
        if self.runtime is None:  # start() either sets it or raises
            raise StorageError("the run store could not be opened")
        return self.runtime

    # --- starting ------------------------------------------------------------------------

    def prepare(
        self, workflow: dict[str, Any], parameters: Any, options: RunOptions
    ) -> dict[str, Any]:
        """Checks before anything runs: parameters, permission for commands, the sandbox."""
        values = check_parameters(workflow, parameters)
        if options.parallel_limit is not None and options.parallel_limit < 1:
            raise InvalidParams("parallel_limit must be at least 1", details="parallel_limit < 1")
        if options.timeout is not None and options.timeout <= 0:
            raise InvalidParams("timeout must be positive", details="timeout <= 0")
        return values

    def plan(
        self, workflow: dict[str, Any], parameters: Any, options: RunOptions
    ) -> dict[str, Any]:
        values = self.prepare(workflow, parameters, options)
        masks = _secrets_of(workflow)  # as the run would store and use them (see `run`)
        return plan_run(
            workflow,
            masks.mask(values),
            masks.mask(options.context),
            self.project,
            options.parallel_limit,
            options.timeout or workflow.get("timeoutSeconds"),
        )

    def run(self, workflow: dict[str, Any], parameters: Any, options: RunOptions) -> str:
        values = self.prepare(workflow, parameters, options)
        if has_commands(workflow) and not self.settings.allow_commands:
            raise SecurityViolation(
                "this workflow has command steps, and command execution is off: start the server "
                "with --allow-commands to allow it (dry runs are always allowed)",
                flag="--allow-commands",
                workflowId=workflow.get("id"),
            )
        if sandbox_wanted(workflow) or self.settings.sandbox:
            check_sandbox()
        runtime = self._runtime()
        timeout = options.timeout or workflow.get("timeoutSeconds")
        run_id = f"wf-{uuid.uuid4().hex[:12]}"
        # The run's input is stored: a parameter or a context value holding a secret's value is
        # stored (and seen by the steps) masked, as everything else of the run.
        masks = _secrets_of(workflow)
        runtime.start_run(
            run_id,
            {
                "workflow": workflow,
                "parameters": masks.mask(values),
                "context": masks.mask(options.context),
                "deadline": time.time() + timeout if timeout else None,
                "parallel_limit": options.parallel_limit,
                "started_at": time.time(),
            },
        )
        return run_id

    # --- reading -------------------------------------------------------------------------

    def get(self, run_id: str) -> dict[str, Any]:
        """The run as the spec shapes it (status, workflow_id, steps_completed, step_results, ...)."""
        return _public(self._raw(run_id))

    def _raw(self, run_id: str) -> dict[str, Any]:
        runtime = self._runtime()
        cached = self._inputs.get(run_id)
        status = runtime.run_status(run_id, load_input=cached is None)
        if status is None:
            recent = self.list(limit=20)
            raise RunNotFound(
                run_id,
                [s["workflow_id"] for s in recent],
                runs_of_it=[s["workflow_id"] for s in recent if s["workflow_name"] == run_id],
            )
        if cached is None:  # a run's input never changes: read its definition once
            cached = self._inputs[run_id] = run_input(status)
        return _snapshot(status, cached, runtime.events(run_id), runtime.step_results(run_id))

    def list(self, *, running_only: bool = False, limit: int = 50) -> list[dict[str, Any]]:
        runtime = self._runtime()
        statuses = runtime.list_runs(running_only=running_only, limit=limit)
        # An in-flight run may be waiting for the agent: its state event says so, as in get().
        return [
            _summary(s, runtime.events(s.workflow_id) if s.status in _IN_FLIGHT else {})
            for s in statuses
        ]

    def wait(
        self,
        run_id: str,
        seconds: float,
        on_change: Callable[[dict[str, Any]], None] | None = None,
        leave_waiting: str | None = None,
        stop: threading.Event | None = None,
    ) -> dict[str, Any]:
        """The run once it ends or waits for the agent, or as it is when ``seconds`` are up
        (or when ``stop`` is set)."""
        end = time.monotonic() + max(seconds, 0.0)
        seen = None
        while True:
            mark_before = self._runtime().change_mark(run_id)
            snap = self.get(run_id)
            mark = (snap["status"], len(snap["step_results"]))
            if on_change is not None and mark != seen:
                on_change(snap)
            seen = mark
            waiting_here = (
                snap["status"] == "waiting"
                and snap.get("waiting", {}).get("step_key") == leave_waiting
            )
            if snap["status"] not in ACTIVE or (snap["status"] == "waiting" and not waiting_here):
                return snap
            remaining = end - time.monotonic()
            if remaining <= 0 or (stop is not None and stop.is_set()):
                return snap
            self._runtime().wait_for_change(
                run_id, remaining, steps=on_change is not None, stop=stop, since=mark_before
            )

    # --- acting on a run -----------------------------------------------------------------

    def cancel(self, run_id: str, reason: str | None = None) -> dict[str, Any]:
        raw = self._raw(run_id)
        snap = _public(raw)
        if snap["status"] not in ACTIVE:
            return {
                "status": snap["status"],
                "steps_completed": snap["steps_completed"],
                "message": f"run {run_id} had already finished ({snap['status']}); nothing to cancel",
            }
        masks = _secrets_of(raw["_workflow"])
        self._runtime().cancel(run_id, masks.mask(reason or "cancelled"))
        out = {"status": "cancelled", "steps_completed": self.get(run_id)["steps_completed"]}
        if reason:
            out["reason"] = reason
        return out

    def continue_run(
        self,
        run_id: str,
        output: str,
        context: dict[str, Any] | None = None,
        wait_seconds: float = 10.0,
        artifacts: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        snap = self._raw(run_id)
        if snap["status"] != "waiting":
            raise InvalidRunState(
                f"run {run_id} is {snap['status']}, not waiting for the agent",
                runId=run_id,
                status=snap["status"],
            )
        waiting = snap["waiting"]
        step = find_step(snap["_workflow"], waiting["step"]["id"])
        values = {
            "parameters": snap["_parameters"],
            "context": {**waiting.get("context", {}), **(context or {})},
            "steps": {},
        }
        checked = validate_output(step.get("validationCriteria"), output, condition_context(values))
        handed = check_step_artifacts(snap["_workflow"], step, artifacts or [])
        masks = _secrets_of(snap["_workflow"])
        if not checked.valid or not handed.valid:
            blocked: dict[str, Any] = {
                **_public(snap),
                "outcome": "blocked",
                "issues": [*checked.issues, *handed.issues],
                "suggestions": [*checked.suggestions, *handed.suggestions],
            }
            if handed.followups:
                blocked["follow_ups"] = handed.followups
            return masks.mask(blocked)  # type: ignore[no-any-return]
        message: dict[str, Any] = {
            "step_key": waiting["step_key"],
            "output": output,
            "context": context or {},
        }
        if artifacts:
            message["artifacts"] = list(artifacts)
        # DBOS stores the message (and the run's receipt of it): masked before it is sent.
        self._runtime().send(run_id, masks.mask(message))
        after = self.wait(run_id, wait_seconds, leave_waiting=waiting["step_key"])
        return {**after, "outcome": "accepted"}


def _secrets_of(workflow: dict[str, Any]) -> SecretSet:
    """The masks of a workflow's declared secrets, read from this process's environment."""
    return SecretSet.from_environment(declared_secrets(workflow))


def _elapsed(run: dict[str, Any], state: dict[str, Any], status: Any) -> float:
    started = run.get("started_at") or (status.created_at or 0) / 1000
    return max((state.get("finished_at") or time.time()) - started, 0.0)


def _status_of(status: Any, state: dict[str, Any]) -> str:
    if status.status in ("PENDING", "ENQUEUED", "DELAYED"):
        # The summary is the run's last event; the workflow ends right after (a reader in between
        # need not wait for DBOS to record the end).
        return (
            state.get("status", "running")
            if state.get("status") in ACTIVE + TERMINAL
            else "running"
        )
    mapped = _DBOS_STATUS.get(status.status)
    if mapped is not None:
        return mapped
    output = status.output if isinstance(status.output, dict) else {}
    return str(output.get("status", "failed"))


def _snapshot(
    status: Any, run: dict[str, Any], events: dict[str, Any], results: list[dict[str, Any]]
) -> dict[str, Any]:
    workflow = run.get("workflow") or {}
    state = events.get("state") or {}
    kind = _status_of(status, state)
    error = state.get("error_message")
    if status.status in ("ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
        error = str(status.error) if status.error else "the run failed"
    elif kind == "cancelled":
        error = "cancelled: " + str(
            (status.attributes or {}).get("cancel_reason") or "no reason given"
        )
    snap = run_result(
        status.workflow_id,
        kind,
        results,
        len(executable_steps(workflow)),
        _elapsed(run, state, status),
        error if kind not in ("success",) + ACTIVE else None,
        workflow_name=workflow.get("id"),
    )
    if kind == "waiting" and state.get("waiting"):
        snap["waiting"] = state["waiting"]
    snap["_workflow"], snap["_parameters"] = workflow, run.get("parameters") or {}
    return snap


def _public(snap: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in snap.items() if not k.startswith("_")}


_IN_FLIGHT = ("PENDING", "ENQUEUED", "DELAYED")


def _summary(status: Any, events: dict[str, Any]) -> dict[str, Any]:
    run = run_input(status)
    kind = _status_of(status, events.get("state") or {})
    return {
        "workflow_id": status.workflow_id,
        "workflow_name": (run.get("workflow") or {}).get("id"),
        "status": kind,
        "started_at": (status.created_at or 0) / 1000,
    }
