"""Runs as DBOS workflows, with command steps checkpointed in the step journal.

Importing this module imports DBOS (about half a second), so only the service imports it, and only
once a run is asked for. The store is one database: DBOS's system tables plus the journal's
(`journal`) — SQLite under ``WORKRAIL_HOME`` by default, Postgres when ``WORKRAIL_DATABASE_URL``
names one. Values are stored as JSON (DBOS's portable serializer), so what is in the database is
readable — and the tests can prove that no secret is in it.

A run's record: the DBOS workflow (input: the definition pinned at start, parameters, deadline;
status; the event ``state`` — running, waiting and for what, the summary) and its journal rows
(one per attempt, one per step result). Members of a parallel group run as threads of the run's
process on SQLite, and as child workflows on a queue shared by every process on Postgres, where
several machines share the work.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID
from dbos._dbos import _get_dbos_instance
from dbos._error import DBOSWorkflowCancelledError
from dbos._serialization import DBOSPortableJSONSerializer

from .cancel_watch import CancelWatch
from .commands import AttemptSettings, run_attempt
from .executors import ExecutorLock, InFlight, dead_executors, forget, stop_orphans
from .journal import Journal
from .model import run_input, step_result
from .plan import has_commands
from .secrets import MaskingFilter, SecretSet
from .sqlite_store import sqlite_engine
from .walker import RunWalker, run_with_retries
from .workspace import minimal_environment

__all__ = [
    "APP_VERSION",
    "launch",
    "exit_promptly_on_shutdown",
    "live_run_ids",
    "shutdown",
    "start_run",
    "step_results",
    "wait_for_change",
    "workrail_member",
    "workrail_run",
]

APP_VERSION = "workrail-runs-2"  # fixed: DBOS only recovers runs started by the same version
STEP_QUEUE = "workrail-steps"  # the members of parallel groups on Postgres, shared by every process
# Where the runs of a dead process wait to be taken over (DBOS's own recovery queue is dequeued by
# every process, including those not allowed to run commands): runs with command steps go to a
# queue only processes allowed to run them listen to; the others to one every process listens to.
RECOVERED_RUNS = "workrail-recovered-runs"
RECOVERED_AGENT_RUNS = "workrail-recovered-agent-runs"
CONTINUE_TOPIC = "continue"
WAIT_CHUNK = 30.0  # seconds

_settings: AttemptSettings | None = None
_watch: CancelWatch | None = None
_groups: InFlight | None = None
_journal: Journal | None = None
_members_on_queue = False
_liveness: Any = None  # PostgresLiveness on a Postgres store
# The runs executing in this process → [state changes, step results recorded]: what a waiter
# here watches instead of reading the run from the database again and again.
_live: dict[str, list[int]] = {}
_lock = threading.Lock()


def _cancelled(run_ids: list[str]) -> list[str]:
    assert _journal is not None
    return [
        run_id for run_id, status in _journal.statuses(run_ids).items() if status == "CANCELLED"
    ]


_launched: tuple[Path, str] | None = None
_executor_lock: ExecutorLock | None = None
_exit_hook = False


def launch(home: Path, database_url: str | None, settings: AttemptSettings) -> str:
    """Start DBOS in this process and recover the runs of executors that died; the executor id.

    DBOS is one per process: a second launch on the same store returns the same executor.
    """
    with _lock:
        return _launch(home, database_url, settings)


def _launch(home: Path, database_url: str | None, settings: AttemptSettings) -> str:
    global _settings, _watch, _launched, _journal, _members_on_queue
    if _launched is not None:
        if _launched[0] != home:
            raise RuntimeError(f"this process already uses the run store {_launched[0]}")
        _settings = settings
        return _launched[1]
    _settings = settings
    _watch = CancelWatch(_cancelled)
    lock = ExecutorLock(home)
    url = database_url or f"sqlite:///{home / 'runs.sqlite'}"
    DBOS(
        config={
            "name": "workrail",
            "system_database_url": url,
            "system_database_engine": sqlite_engine(url) if url.startswith("sqlite") else None,
            "application_version": APP_VERSION,
            "executor_id": lock.executor_id,
            "serializer": DBOSPortableJSONSerializer(),
            "log_level": "WARNING",
            "notification_listener_polling_interval_sec": 0.1,
        }
    )
    if not settings.allow_commands:
        DBOS.listen_queues(
            [RECOVERED_AGENT_RUNS]
        )  # leave command steps to processes allowed to run them
    _mask_logs()
    # Before DBOS starts its queue workers: a run handed back earlier may be dequeued at once.
    global _groups, _executor_lock
    _journal = Journal(url)
    _members_on_queue = _journal.postgres
    _groups = InFlight(lock)
    DBOS.launch()
    if settings.allow_commands and _members_on_queue:
        DBOS.register_queue(STEP_QUEUE, polling_interval_sec=0.05, on_conflict="always_update")
    for queue in (RECOVERED_RUNS, RECOVERED_AGENT_RUNS):
        DBOS.register_queue(queue, polling_interval_sec=2.0, on_conflict="always_update")
    dead = dead_executors(home, lock.executor_id)
    if _journal.postgres:
        # Processes on other machines die too: which executors are dead is known from Postgres
        # (`pg_liveness`), and one living process takes over each of them. The local lock files
        # still tell which process groups a dead process of this machine left running.
        stop_orphans(home, dead)
        forget(home, dead)
        _watch_postgres(home, url, lock.executor_id)
    elif dead:
        _recover(home, dead)
    _executor_lock = lock
    _launched = (home, lock.executor_id)
    return lock.executor_id


def _watch_postgres(home: Path, url: str, executor_id: str) -> None:
    """Register this executor as alive in the shared store, and watch for dead ones
    (`WORKRAIL_LIVENESS_INTERVAL`, default every 5 s)."""
    from .pg_liveness import PostgresLiveness

    global _liveness
    _liveness = PostgresLiveness(
        url, executor_id, interval=float(os.environ.get("WORKRAIL_LIVENESS_INTERVAL", "5"))
    )
    _liveness.start()
    _liveness.watch(lambda dead: _recover(home, dead))


def _recover(home: Path, dead: list[str]) -> None:
    """Hand the runs of dead executors to the living: each goes back on a recovery queue (the
    member of a parallel group on its own queue), where one process takes it and resumes it."""
    stop_orphans(home, dead)  # steps of a killed process outlive it (own sessions): stop them first
    system = _get_dbos_instance()._sys_db
    for executor_id in dead:
        pending = [p.workflow_id for p in system.get_pending_workflows(executor_id, APP_VERSION)]
        if not pending:
            continue
        for status in DBOS.list_workflows(workflow_ids=pending, load_output=False):
            queue = RECOVERED_RUNS
            if status.name == "workrail_run" and not has_commands(
                run_input(status).get("workflow") or {}
            ):
                queue = RECOVERED_AGENT_RUNS
            system.reenqueue_for_recovery(status.workflow_id, [executor_id], queue)
    forget(home, dead)


def exit_promptly_on_shutdown() -> None:
    """For a server process: when it ends (stdin closed, say) while runs are in flight, end at
    once instead of waiting for their threads (a run waiting for an agent would block the exit
    for ever). Their process groups are killed; the runs are durable and the next process that
    opens the store takes them over. Registered with the hooks that run before the interpreter
    joins its thread pools."""
    global _exit_hook
    if not _exit_hook:
        threading._register_atexit(_exit_if_busy)  # type: ignore[attr-defined]
        _exit_hook = True


def _exit_if_busy() -> None:
    if not _live:
        return
    if _groups is not None:
        _groups.kill_all()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def shutdown() -> None:
    """Stop DBOS in this process (its background threads too) after a clean finish of the
    caller's work; runs still in flight are left to be recovered by the next process."""
    global _launched, _groups, _executor_lock, _journal, _liveness
    with _lock:
        if _launched is None:
            return
        DBOS.destroy(workflow_completion_timeout_sec=0)
        if _watch is not None:
            _watch.stop()
        if (
            not _live
        ):  # a run still in flight here keeps its journal and logs until the process exits
            for part in (_groups, _journal, _liveness):
                if part is not None:
                    part.close()
            if _executor_lock is not None:
                _executor_lock.release()
        _launched = _groups = _executor_lock = _journal = _liveness = None


_changed = threading.Condition()  # notified when a run of this process changes status


def _notify() -> None:
    with _changed:
        _changed.notify_all()


def _count(run_id: str, which: int) -> None:
    progress = _live.get(run_id)  # a member run by another process than its run's: not here
    if progress is not None:
        progress[which] += 1


def change_mark(run_id: str) -> list[int]:
    """The counts ``wait_for_change`` compares against: read it *before* reading the run, so a
    change between that read and the wait is not missed (a run not yet executing here counts
    from zero: one that starts in between has changed)."""
    progress = _live.get(run_id)
    return list(progress) if progress is not None else [0, 0]


def wait_for_change(
    run_id: str,
    seconds: float,
    *,
    steps: bool,
    stop: threading.Event | None = None,
    poll: float = 0.1,
    remote: float = 0.25,
    since: list[int] | None = None,
) -> None:
    """Return when a run of this process changes state (or, with ``steps``, has recorded a step
    since the call, looked at every ``poll`` s), when ``seconds`` are up or ``stop`` is set. A run
    executing elsewhere can only be read again: this sleeps ``remote`` s."""
    progress = _live.get(run_id)
    if progress is None:
        time.sleep(max(min(seconds, remote), 0.0))
        return
    seen = since if since is not None else list(progress)
    end = time.monotonic() + seconds
    with _changed:
        while True:
            now = _live.get(run_id)
            if now is None or now[0] != seen[0] or (steps and now[1] != seen[1]):
                return
            left = end - time.monotonic()
            if left <= 0 or (stop is not None and stop.is_set()):
                return
            _changed.wait(min(left, poll))


def _mask_logs() -> None:
    """Secrets are masked in every log line this process writes, whichever library logs it."""
    masking = MaskingFilter()
    for name in ("", "dbos", "workrail_engine", "workrail_mcp"):
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(masking)


def live_run_ids() -> list[str]:
    return list(_live)


def step_results(run_id: str) -> list[dict]:
    """A run's step results, in the order they ended (from the journal: every step at once)."""
    assert _journal is not None, "durable.launch() first"
    return _journal.results(run_id)


def watch() -> CancelWatch:
    assert _watch is not None, "durable.launch() first"
    return _watch


def start_run(run_id: str, run: dict[str, Any]) -> None:
    with SetWorkflowID(run_id):
        DBOS.start_workflow(workrail_run, run)


@DBOS.step(name="workrail_clock")
def _clock() -> float:
    return time.time()


_UNRECORDED = object()


class _Effects:
    """The walk's side effects, each one durable: attempts and results in the step journal; the
    run's state, agent messages, queued members and clock reads through DBOS."""

    def __init__(self, run_id: str, secret_names: list[str]) -> None:
        assert _journal is not None, "durable.launch() first"
        self.run_id = run_id
        self.journal = _journal
        self.secret_names = secret_names
        self.masks = SecretSet.from_environment(secret_names)
        self.environment = minimal_environment()  # what every step of the run inherits
        self.status: str | None = None  # the run's status read with the last result, not yet used
        self.done = self.journal.attempts(
            run_id
        )  # a replay gets these back instead of running them
        self.recorded = self.journal.recorded_keys(run_id)

    def attempt(
        self, key: str, step: dict, values: dict, attempt: int, deadline: float | None
    ) -> dict:
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
            outcome = self._run(key, step, values, attempt, deadline)
        self.journal.add_attempt(self.run_id, key, attempt, outcome)
        return outcome

    def _cancelled(self) -> bool:
        status, self.status = self.status, None
        if status is None:
            status = self.journal.statuses([self.run_id]).get(self.run_id)
        return status == "CANCELLED"

    def _run(
        self, key: str, step: dict, values: dict, attempt: int, deadline: float | None
    ) -> dict:
        # A cancel from any process lands in DBOS's status at once; reading it before each step
        # (with the previous step's result, or here) means no step starts after it, even before
        # the watcher's next poll.
        if self._cancelled():
            raise DBOSWorkflowCancelledError(f"run {self.run_id} was cancelled")
        if step.get("idempotent") is False:
            self.journal.mark(self.run_id, key, attempt)
        assert _settings is not None
        flag = watch().watch(self.run_id)
        try:
            return run_attempt(
                step,
                values,
                self.secret_names,
                _settings,
                deadline,
                flag,
                on_start=_groups.add if _groups else None,
                on_end=_groups.remove if _groups else None,
                environment=self.environment,
            )
        finally:
            watch().release(self.run_id, flag)

    def parallel(
        self, members: list[tuple[str, dict, dict]], limit: int, deadline: float | None
    ) -> list[dict]:
        self.journal.flush()
        if _members_on_queue:
            return self._queued(members, limit, deadline)
        # Threads of this process, at most ``limit`` at a time; each member records its result
        # as it ends (the walk records it again afterwards, which is a no-op).
        with ThreadPoolExecutor(max_workers=limit, thread_name_prefix="workrail-member") as pool:
            futures = [
                pool.submit(self.member, key, step, values, deadline)
                for key, step, values in members
            ]
            try:
                return [future.result() for future in futures]
            finally:
                for future in futures:
                    future.cancel()

    def member(self, key: str, step: dict, values: dict, deadline: float | None) -> dict:
        try:
            result = run_with_retries(self, key, step, values, deadline)
        except (
            ValueError,
            KeyError,
            TypeError,
        ) as exc:  # a definition the lint should have refused
            result = step_result(key, "failed", None, 0.0, step_id=step.get("id"), error=str(exc))
        self.record(result)
        return result

    def _queued(
        self, members: list[tuple[str, dict, dict]], limit: int, deadline: float | None
    ) -> list[dict]:
        """Members as children on the shared step queue, at most ``limit`` queued or running at a
        time (a sliding window): the limit holds for the run whichever processes dequeue them."""
        results: list[dict] = [{} for _ in members]
        waiting = list(enumerate(members))
        running: dict[str, tuple[int, Any]] = {}
        while waiting or running:
            while waiting and len(running) < limit:
                index, (key, step, values) = waiting.pop(0)
                handle = DBOS.enqueue_workflow(
                    STEP_QUEUE,
                    workrail_member,
                    self.run_id,
                    key,
                    step,
                    values,
                    deadline,
                    self.secret_names,
                )
                running[handle.workflow_id] = (index, handle)
            done = DBOS.wait_first([h for _, h in running.values()], polling_interval_sec=0.01)
            index, handle = running.pop(done.workflow_id)
            results[index] = handle.get_result(polling_interval_sec=0.01)
        self.recorded |= self.journal.recorded_keys(self.run_id)  # the members recorded theirs
        return results

    def wait(self, key: str, waiting: dict, deadline: float | None) -> dict | None:
        self.journal.flush()
        self.status = None  # stale once the agent answers
        while True:
            remaining = WAIT_CHUNK if deadline is None else deadline - _clock()
            if remaining <= 0:
                return None
            # In chunks: a cancelled run notices at the next one (each timeout is a checkpoint,
            # so a replay goes through the same chunks).
            message = DBOS.recv(CONTINUE_TOPIC, timeout_seconds=min(remaining, WAIT_CHUNK))
            if isinstance(message, dict) and message.get("step_key") == key:
                return self.masks.mask(message)

    def sleep_until(self, moment: float) -> None:
        """A retry delay. ``moment`` comes from a recorded attempt, so a replay after a crash
        waits only for what is left of it; a cancel ends it at once."""
        self.journal.flush()
        self.status = None  # stale after the delay
        if moment <= time.time():
            return
        flag = watch().watch(self.run_id)
        try:
            if flag.wait(moment - time.time()) or self._cancelled():
                raise DBOSWorkflowCancelledError(f"run {self.run_id} was cancelled")
        finally:
            watch().release(self.run_id, flag)

    def record(self, result: dict) -> None:
        key = result["step_name"]
        if key in self.recorded:
            return
        self.recorded.add(key)
        self.status = self.journal.add_result(self.run_id, key, self.masks.mask(result))
        # Counted, not notified: a waiter that shows progress looks every 0.1 s; waking it (and
        # its read of the whole run) at every step would slow a run of short commands.
        _count(self.run_id, 1)

    def state(self, state: dict) -> None:
        self.journal.flush()
        self.status = None
        DBOS.set_event("state", self.masks.mask(state))
        _count(self.run_id, 0)
        _notify()


@DBOS.workflow(name="workrail_run")
def workrail_run(run: dict) -> dict:
    run_id = DBOS.workflow_id
    assert run_id is not None
    workflow = run["workflow"]
    _live[run_id] = [0, 0]
    effects = _Effects(run_id, list(workflow.get("secrets") or []))
    walker = RunWalker(
        workflow,
        run["parameters"],
        run.get("context") or {},
        effects,
        deadline=run.get("deadline"),
        parallel_limit=run.get("parallel_limit"),
        masked_secrets={name: "***" for name in effects.secret_names},
    )
    try:
        try:
            summary = walker.run()
        except (
            ValueError,
            KeyError,
            TypeError,
        ) as exc:  # a definition the lint should have refused
            summary = {
                "status": "failed",
                "error_message": f"the run stopped on a malformed workflow: {exc}",
            }
        # The clock as is (not a checkpointed read): the summary is stored once, by the
        # `state` event below, which a replay does not send again.
        summary = {**effects.masks.mask(summary), "finished_at": time.time()}
        effects.state(summary)
        return summary
    finally:
        _live.pop(run_id, None)
        _notify()


@DBOS.workflow(name="workrail_member")
def workrail_member(
    run_id: str, key: str, step: dict, values: dict, deadline: float | None, secret_names: list[str]
) -> dict:
    return _Effects(run_id, secret_names).member(key, step, values, deadline)
