"""The walk's side effects, each one durable (`RunEffects`, the `Effects` the walker drives):
attempts and results in the step journal; the run's state, the agent's messages and clock reads
through DBOS; a parallel group's members through members.py.

A replay (DBOS runs the workflow again after a crash) asks for the same effects in the same
order and gets back what the journal and DBOS recorded instead of running them again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dbos import DBOS
from dbos._error import DBOSWorkflowCancelledError  # what DBOS itself catches as "cancelled"

from ..commands import run_attempt
from ..executor_liveness import InFlight
from ..journal import Recorded, StatusRead
from ..run_results import step_result
from ..secrets import SecretSet
from ..step_events import ended_event, started_event
from ..walker import run_with_retries
from ..while_running import WhileRunning
from ..workspace import minimal_environment
from .members import Members, in_threads, on_member_queue

if TYPE_CHECKING:
    from .runtime import DurableRuntime

__all__ = ["CONTINUE_TOPIC", "WAIT_CHUNK", "RunEffects"]

CONTINUE_TOPIC = "continue"  # the topic of the agent's messages to a run waiting for it
WAIT_CHUNK = 30.0  # seconds


@DBOS.step(name="workrail_clock")
def _clock() -> float:
    return time.time()


_UNRECORDED = object()


def _at_once(work: Callable[..., None], *args: Any) -> None:
    work(*args)


class _RunGroups:
    """The executor's process-group log (`InFlight`) as a run's steps tell it (`StepGroups`):
    a group's ``-`` line is written while the run's next step runs (`while_running`)."""

    def __init__(self, groups: InFlight, later: Callable[..., None]) -> None:
        self._groups, self._later = groups, later
        # the log's own methods, not one call more each at every step
        self.expect, self.add, self.not_spawned = groups.expect, groups.add, groups.not_spawned

    def ended(self, pgid: int) -> None:
        self._groups.forget(pgid)
        self._later(self._groups.log_end, pgid)


class RunEffects:
    """The side effects of one run's walk, or of one member of its parallel group."""

    def __init__(
        self,
        runtime: DurableRuntime,
        run_id: str,
        secret_names: list[str],
        member: str | None = None,
        recorded: Recorded | None = None,
        while_running: WhileRunning | None = None,
    ) -> None:
        """``member``: the step key of the parallel member these effects are for (taken from the
        member queue); ``recorded``: what the journal holds for it, when already read (with its
        claim);
        ``while_running``: the walk's queue of bookkeeping done while its next step runs (a
        member's effects have none: a member's events are told as they happen)."""
        self.runtime = runtime
        self.run_id = run_id
        self.journal = runtime.journal
        self.secret_names = secret_names
        self.masks = SecretSet.from_environment(secret_names)
        self.environment = minimal_environment()  # what every step of the run inherits
        # A replay gets these back instead of running them.
        self.done, self.recorded, status = recorded or self.journal.recorded(run_id, member)
        # the run's status read with the last result (or with the above), not yet used
        self.status: StatusRead | None = lambda: status
        self.while_running = while_running
        self.cancel_flag = threading.Event()  # set by the cancel watch: the attempts share it
        # The thread that walks (a run's, a queued member's): its attempts come one after the
        # other, and the cancel watch taken at the first is held until it pauses or ends
        # (`release_watch`). Members run in threads of the run's process take theirs each.
        self.walking = threading.get_ident()
        self.watching = False
        # ``later(work, *args)``: work done while the walk's next step runs, or now (no keyword
        # arguments: a step's events are queued as made)
        self.later: Callable[..., None] = _at_once if while_running is None else while_running.add
        self.groups = _RunGroups(runtime.groups, self.later)  # what the attempts tell the log

    def attempt(
        self,
        key: str,
        step: dict[str, Any],
        values: dict[str, Any],
        attempt: int,
        deadline: float | None,
    ) -> dict[str, Any]:
        found = self.done.get((key, attempt), _UNRECORDED)
        if isinstance(found, dict):
            return found
        if found is None:  # marked in flight by an earlier execution that never finished it
            outcome = {
                "status": "interrupted",
                "output": None,
                "duration": 0.0,
                "finished_at": time.time(),
                "error": "the process running this step (idempotent: false) stopped while it was in "
                "flight; it was not run again",
            }
        else:
            if attempt == 1:
                started = started_event(key, step.get("title"))
                self.later(self.runtime.steps.append, self.run_id, started)
            outcome = self._run(key, step, values, attempt, deadline)
        self.journal.add_attempt(self.run_id, key, attempt, outcome)
        return outcome

    def _cancel_check(self) -> None:
        # A cancel from any process lands in DBOS's status at once; reading it before each spawn
        # (with the previous step's result, or here) means no step starts after it, even before
        # the watcher's next poll.
        if self._cancelled():
            raise DBOSWorkflowCancelledError(f"run {self.run_id} was cancelled")

    def _cancelled(self) -> bool:
        status = self._written()
        if status is None:
            status = self.journal.statuses([self.run_id]).get(self.run_id)
        return status == "CANCELLED"

    def _written(self) -> str | None:
        """Wait until the last result is durable (its write's answer read, its error raised);
        the run's status read with it, if not used yet."""
        read, self.status = self.status, None
        return read() if read is not None else None

    def _flush(self) -> None:
        """Everything durable before a pause, a wait or a state change (the status read with the
        last result is stale after them), and the bookkeeping queued for the next step done."""
        self.release_watch()
        self._written()
        self.journal.flush()
        if self.while_running is not None:
            self.while_running.run()

    def _run(
        self,
        key: str,
        step: dict[str, Any],
        values: dict[str, Any],
        attempt: int,
        deadline: float | None,
    ) -> dict[str, Any]:
        if step.get("idempotent") is False:
            self._cancel_check()  # before its mark: a cancelled run marks nothing in flight
            self.journal.mark(self.run_id, key, attempt)
        watch, flag = self.runtime.watch, self.cancel_flag
        walking = threading.get_ident() == self.walking
        if not walking:
            watch.watch(self.run_id, flag)
        elif not self.watching:
            watch.watch(self.run_id, flag)
            self.watching = True
        try:
            return run_attempt(
                step,
                values,
                self.secret_names,
                self.runtime.settings,
                deadline,
                flag,
                self.groups,
                environment=self.environment,
                # On Postgres the check waits for the previous step's result to be committed
                # (`Journal.add_result`): last before the spawn, so the rendering above overlaps
                # the round trip; nothing starts after a cancel or before the result is durable.
                before_spawn=self._cancel_check,
                while_running=self.while_running,
            )
        finally:
            if not walking:
                watch.release(self.run_id, flag)

    def release_watch(self) -> None:
        """The walk pauses or ends: its cancel watch is given back (see ``walking``)."""
        if self.watching:
            self.watching = False
            self.runtime.watch.release(self.run_id, self.cancel_flag)

    def parallel(
        self, members: Members, limit: int, deadline: float | None
    ) -> list[dict[str, Any]]:
        self._flush()
        if self.runtime.members_on_queue:
            return on_member_queue(self, members, limit, deadline)
        return in_threads(self, members, limit, deadline)

    def member(
        self, key: str, step: dict[str, Any], values: dict[str, Any], deadline: float | None
    ) -> dict[str, Any]:
        try:
            result = run_with_retries(self, key, step, values, deadline)
        except (
            ValueError,
            KeyError,
            TypeError,
        ) as exc:  # a definition the lint should have refused
            result = step_result(key, "failed", None, 0.0, step_id=step.get("id"), error=str(exc))
        finally:
            self.release_watch()
        self.record(result)
        self._written()  # durable before the member's end is told
        return result

    def wait(
        self, key: str, waiting: dict[str, Any], deadline: float | None
    ) -> dict[str, Any] | None:
        self._flush()
        while True:
            remaining = WAIT_CHUNK if deadline is None else deadline - _clock()
            if remaining <= 0:
                return None
            # In chunks: a cancelled run notices at the next one (each timeout is a checkpoint,
            # so a replay goes through the same chunks).
            message = DBOS.recv(CONTINUE_TOPIC, timeout_seconds=min(remaining, WAIT_CHUNK))
            if isinstance(message, dict) and message.get("step_key") == key:
                answer: dict[str, Any] = self.masks.mask(message)
                return answer

    def sleep_until(self, moment: float) -> None:
        """A retry delay. ``moment`` comes from a recorded attempt, so a replay after a crash
        waits only for what is left of it; a cancel ends it at once."""
        self._flush()
        if moment <= time.time():
            return
        flag = self.runtime.watch.watch(self.run_id)
        try:
            if flag.wait(moment - time.time()) or self._cancelled():
                raise DBOSWorkflowCancelledError(f"run {self.run_id} was cancelled")
        finally:
            self.runtime.watch.release(self.run_id, flag)

    def record(self, result: dict[str, Any]) -> None:
        key = result["step_name"]
        if key in self.recorded:
            return
        self.recorded.add(key)
        self.status = self.journal.add_result(self.run_id, key, self.masks.mask(result))
        ended = ended_event(key, result["status"])
        self.later(self.runtime.steps.append, self.run_id, ended)
        # Counted, not notified: a waiter that shows progress looks every 0.1 s; waking it (and
        # its read of the whole run) at every step would slow a run of short commands.
        self.runtime.progress.count(self.run_id, 1)

    def state(self, state: dict[str, Any]) -> None:
        self._flush()
        DBOS.set_event("state", self.masks.mask(state))
        if state.get("status") == "waiting":
            self.runtime.progress.waiting.add(self.run_id)
            waiting = state.get("waiting") or {}
            self.runtime.steps.add(
                self.run_id,
                "waiting",
                str(waiting.get("step_key")),
                title=(waiting.get("step") or {}).get("title"),
            )
        else:
            self.runtime.progress.waiting.discard(self.run_id)
        self.runtime.progress.count(self.run_id, 0)
        self.runtime.progress.notify()
