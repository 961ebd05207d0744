"""Runs as DBOS workflows, with command steps checkpointed in the step journal.

Importing this module imports DBOS (about half a second), so only the service imports it, and only
once a run is asked for. The store is one database: DBOS's system tables plus the journal's
(`journal`) — SQLite under ``WORKRAIL_HOME`` by default, Postgres when ``WORKRAIL_DATABASE_URL``
names one. Values are stored as JSON (DBOS's portable serializer), so what is in the database is
readable — and the tests can prove that no secret is in it.

A run's record: the DBOS workflow (input: the definition pinned at start, parameters, deadline;
status; the event ``state`` — running, waiting and for what, the summary) and its journal rows
(one per attempt, one per step result). Members of a parallel group run as threads of the run's
process on SQLite, and on Postgres on the member queue (member_queue.py), a table of ours shared
by every process allowed to run commands, where several machines share the work.

Everything DBOS and the runs executing here share is one `DurableRuntime` (DBOS is one per
process: `launch` makes it or returns it; the `RunService` owns it), and every DBOS call the
service needs goes through it. DBOS's public API is used wherever it has the call; the one place
that needs its private API, handing a dead executor's runs to a recovery queue, is
`_reenqueue_dead` (tests/engine/runs/test_dbos_private_api.py fails loudly if DBOS changes it).
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dbos import DBOS, DBOSPortableJSONSerializer, SetWorkflowID
from dbos._error import DBOSWorkflowCancelledError  # what DBOS itself catches as "cancelled"

from ..definition.declared import declared_secrets
from . import run_logs
from .cancel_watch import CancelWatch
from .commands import AttemptSettings, PreparedCommand, prepare_command, run_attempt
from .executors import (
    ExecutorLock,
    InFlight,
    dead_executors,
    executor_locked,
    forget,
    stop_orphans,
)
from .journal import Journal, Recorded, StatusRead
from .model import run_input, step_result
from .plan import has_commands
from .secrets import MaskingFilter, SecretSet
from .sqlite_store import DATABASE, make_private, sqlite_engine
from .step_events import StepEvents
from .walker import RunWalker, run_with_retries
from .while_running import WhileRunning
from .workspace import minimal_environment

__all__ = [
    "APP_VERSION",
    "DurableRuntime",
    "current",
    "launch",
    "running",
    "workrail_member",
    "workrail_run",
]

APP_VERSION = "workrail-runs-2"  # fixed: DBOS only recovers runs started by the same version
# DBOS's queue of parallel members on Postgres until the member queue of our own (member_queue.py):
# still dequeued, slowly, for runs an earlier version left in flight there.
STEP_QUEUE = "workrail-steps"
# Where the runs of a dead process wait to be taken over (DBOS's own recovery queue is dequeued by
# every process, including those not allowed to run commands): runs with command steps go to a
# queue only processes allowed to run them listen to; the others to one every process listens to.
RECOVERED_RUNS = "workrail-recovered-runs"
RECOVERED_AGENT_RUNS = "workrail-recovered-agent-runs"
CONTINUE_TOPIC = "continue"
WAIT_CHUNK = 30.0  # seconds
# How often a run waiting for its queued parallel members reads whether one ended: members taken
# by this process wake it at once, those of another process by their end's notification where
# this process listens to the member queue (the look is then a safety net), else only by this.
MEMBER_POLL = 0.025  # seconds
MEMBER_LOOK = 0.5  # seconds
RUN_WORKFLOW = "workrail_run"  # the DBOS workflow name of a run

# The process's runtime: DBOS is one per process, and its workflow functions find their runtime here.
_current: DurableRuntime | None = None
_lock = threading.Lock()
_exit_hooks: set[str] = set()


class NotLaunched(RuntimeError):
    """A runs call before the runtime was launched (`RunService.start()` first)."""


def current() -> DurableRuntime:
    if _current is None:
        raise NotLaunched("the run store is not open in this process: RunService.start() first")
    return _current


def running() -> DurableRuntime | None:
    """The runtime of this process, if one was launched (without launching one)."""
    return _current


def launch(
    home: Path,
    database_url: str | None,
    settings: AttemptSettings,
    *,
    executes: bool = True,
    answered: Callable[[str, str], bool] | None = None,
) -> DurableRuntime:
    """Start DBOS in this process and recover the runs of executors that died.

    ``executes=False``: this process only reads and answers runs (it takes none from a queue);
    a run that needs an executor is handed to a worker (`hand_over`, `worker.spawn_worker`).
    ``answered(run_id, step_key)``: whether the answers table holds an answer to that step.
    DBOS is one per process: a second launch on the same store returns the same runtime (with the
    newer settings); on another store it raises `RuntimeError`.
    """
    global _current
    with _lock:
        if _current is not None:
            if _current.home != home:
                raise RuntimeError(f"this process already uses the run store {_current.home}")
            _current.settings = settings
            return _current
        runtime = DurableRuntime(home, database_url, settings, executes=executes)
        if answered is not None:
            runtime.answered = answered
        # Current before DBOS starts: what it runs during the launch (a member dequeued from the
        # shared step queue, a run recovered) looks the runtime up at once.
        _current = runtime
        try:
            runtime.launch()
        except BaseException:
            _current = None
            runtime.abandon_launch()
            raise
        if "cleanup" not in _exit_hooks:
            # A process that ends with nothing in flight leaves no lock file behind (`workrail
            # runs` would leave one per call): the same clean stop as `shutdown`.
            atexit.register(_shutdown_current)
            _exit_hooks.add("cleanup")
        return runtime


def _shutdown_current() -> None:
    runtime = _current
    if runtime is not None:
        runtime.shutdown()


class DurableRuntime:
    """DBOS in this process and what the runs executing here share: the settings of their
    attempts, the cancel watch, the process groups in flight, the step journal, the Postgres
    liveness, and the runs live here (what a waiter here watches instead of reading the run from
    the database again and again)."""

    def __init__(
        self,
        home: Path,
        database_url: str | None,
        settings: AttemptSettings,
        *,
        executes: bool = True,
    ) -> None:
        self.home = home
        self.database_url = database_url
        self.executes = executes
        self.waiting: set[str] = set()  # runs of this process waiting for the agent
        self.answered: Callable[[str, str], bool] = lambda _run, _step: False
        self.url = database_url or f"sqlite:///{home / DATABASE}"
        self.settings = settings
        self.watch = CancelWatch(self.cancelled)
        self.live: dict[str, list[int]] = {}  # run id → [state changes, step results recorded]
        self.changed = threading.Condition()  # notified when a run of this process changes state
        self.steps = StepEvents()  # the steps of the runs executing here, as they start and end
        self.member_ends = MemberEnds()
        self.executor_lock: ExecutorLock | None = None
        self._journal: Journal | None = None
        self._groups: InFlight | None = None
        self.members_on_queue = False
        self.member_queue: Any = None  # MemberQueue: this process takes members from it
        self.liveness: Any = None  # PostgresLiveness on a Postgres store

    # --- the parts, once launched --------------------------------------------------------

    @property
    def journal(self) -> Journal:
        if self._journal is None:
            raise NotLaunched("the run store is closed")
        return self._journal

    @property
    def groups(self) -> InFlight:
        if self._groups is None:
            raise NotLaunched("the run store is closed")
        return self._groups

    @property
    def executor_id(self) -> str:
        if self.executor_lock is None:
            raise NotLaunched("the run store is closed")
        return self.executor_lock.executor_id

    # --- lifecycle -----------------------------------------------------------------------

    def launch(self) -> None:
        make_private(self.home, sqlite=self.url.startswith("sqlite"))
        lock = ExecutorLock(self.home)
        self.executor_lock = lock  # from here on: what a failed launch releases
        DBOS(
            config={
                "name": "workrail",
                "system_database_url": self.url,
                "system_database_engine": sqlite_engine(self.url)
                if self.url.startswith("sqlite")
                else None,
                "application_version": APP_VERSION,
                "executor_id": lock.executor_id,
                "serializer": DBOSPortableJSONSerializer(),
                "log_level": "WARNING",
                "notification_listener_polling_interval_sec": 0.1,
            }
        )
        if not self.executes:
            DBOS.listen_queues([])  # it executes no run: a worker does (see `hand_over`)
        elif not self.settings.allow_commands:
            # leave command steps to processes allowed to run them
            DBOS.listen_queues([RECOVERED_AGENT_RUNS])
        _mask_logs()
        run_logs.install()
        # Before DBOS starts its queue workers: a run handed back earlier may be dequeued at once.
        self._journal = Journal(self.url)
        self.members_on_queue = self._journal.postgres
        self._groups = InFlight(lock)
        DBOS.launch()
        if self.settings.allow_commands and self.members_on_queue:
            # only members of runs an earlier version left on DBOS's queue: slowly
            DBOS.register_queue(STEP_QUEUE, polling_interval_sec=1.0, on_conflict="always_update")
            from .member_queue import MemberQueue

            self.member_queue = MemberQueue(
                self.url, lock.executor_id, self._run_member, self.member_ends.add
            )
            self.member_queue.start()
        for queue in (RECOVERED_RUNS, RECOVERED_AGENT_RUNS):
            DBOS.register_queue(queue, polling_interval_sec=2.0, on_conflict="always_update")
        dead = dead_executors(self.home, lock.executor_id)
        if self._journal.postgres:
            # Processes on other machines die too: which executors are dead is known from
            # Postgres (`pg_liveness`), and one living process takes over each of them. The local
            # lock files still tell which process groups a dead process of this machine left.
            stop_orphans(self.home, dead)
            forget(self.home, dead)
            self._watch_postgres(lock.executor_id)
        elif dead and self.executes:
            self.recover(dead)
        # (A process that executes nothing leaves them to the worker it starts below: handing
        # back a run that only waits for the agent would have a worker replay it for nothing.)
        if not self.executes and self.needs_worker():
            self.start_worker()

    def _watch_postgres(self, executor_id: str) -> None:
        """Register this executor as alive in the shared store, and watch for dead ones
        (`WORKRAIL_LIVENESS_INTERVAL`, default every 5 s)."""
        from .pg_liveness import PostgresLiveness

        self.liveness = PostgresLiveness(
            self.url,
            executor_id,
            interval=float(os.environ.get("WORKRAIL_LIVENESS_INTERVAL", "5")),
        )
        self.liveness.start()
        self.liveness.watch(self.recover)

    def shutdown(self) -> None:
        """Stop DBOS in this process (its background threads too) after a clean finish of the
        caller's work; runs still in flight are left to be recovered by the next process."""
        global _current
        with _lock:
            if _current is not self:
                return
            DBOS.destroy(workflow_completion_timeout_sec=0)
            self.watch.stop()
            if self.member_queue is not None:
                self.member_queue.close()
            # A run still in flight here keeps its journal and logs until the process exits, and
            # a run pending on this executor (in flight, or dequeued just before DBOS stopped)
            # keeps its lock file, so that the next process recovers it.
            if not self.live and not self._owns_pending():
                for part in (self._groups, self._journal, self.liveness):
                    if part is not None:
                        part.close()
                if self.executor_lock is not None:
                    self.executor_lock.release()
            _current = None

    def abandon_launch(self) -> None:
        """After a launch that failed part-way: stop DBOS if it started and close what was
        opened, so that a later launch in this process starts clean. The lock file stays when
        runs are pending on this executor (something DBOS took during the launch): the next
        process recovers them."""
        try:
            DBOS.destroy(workflow_completion_timeout_sec=0)
        except Exception:  # DBOS never got far enough to be made: nothing of it to stop
            logging.getLogger(__name__).debug(
                "no DBOS to stop after a failed launch", exc_info=True
            )
        self.watch.stop()
        if self.member_queue is not None:
            self.member_queue.close()
        pending = self.live or self._owns_pending()
        for part in (self._groups, self._journal, self.liveness):
            if part is not None:
                part.close()
        if self.executor_lock is not None and not pending:
            self.executor_lock.release()
        self._groups = self._journal = self.liveness = None
        self.executor_lock = None

    def _owns_pending(self) -> bool:
        try:
            return self._journal is not None and self._journal.owns_pending(self.executor_id)
        except Exception:  # the store is unreadable: keep the lock file, recovery will sort it out
            return True

    def exit_promptly_on_shutdown(self) -> None:
        """For a server process: when it ends (stdin closed, say) while runs are in flight, end
        at once instead of waiting for their threads (a run waiting for an agent would block the
        exit for ever). Their process groups are killed; the runs are durable and the next
        process that opens the store takes them over. Registered with the hooks that run before
        the interpreter joins its thread pools."""
        if "prompt-exit" not in _exit_hooks:
            threading._register_atexit(_exit_if_busy)  # type: ignore[attr-defined]
            _exit_hooks.add("prompt-exit")

    def kill_in_flight(self) -> None:
        """Kill the processes of the steps running here, for an exit with runs in flight (the
        runs are durable: the next process that opens the store runs those steps again). The
        journal is frozen first: what the kill ends is not a step's result, and the run's thread,
        woken by it, would record a failure in the moment before the process is gone."""
        if self._journal is not None:
            self._journal.freeze()
        if self._groups is not None:
            self._groups.kill_all()

    # --- recovery ------------------------------------------------------------------------

    def recover(self, dead: list[str]) -> None:
        """Hand the runs of dead executors to the living: each goes back on a recovery queue (the
        member of a parallel group on its own queue), where one process takes it and resumes it."""
        stop_orphans(self.home, dead)  # steps of a killed process outlive it: stop them first
        _reenqueue_dead(dead, self._recovery_queue)
        if self.journal.postgres:
            self.journal.requeue_members(dead)
        forget(self.home, dead)

    def _run_member(
        self, run_id: str, key: str, member: dict[str, Any], recorded: Recorded | None
    ) -> None:
        """A member taken from the member queue, in a thread of its own: run (or replay) it, then
        mark its row ended (or cancelled, or failed with its error) for the run waiting on it."""
        state, error = "ended", None
        try:
            _Effects(self, run_id, member["secret_names"], key, recorded).member(
                key, member["step"], member["values"], member["deadline"]
            )
        except DBOSWorkflowCancelledError:
            state = "cancelled"
        except Exception as exc:  # the run raises it, as DBOS re-raised a member's error
            logging.getLogger(__name__).exception("parallel member %s of %s failed", key, run_id)
            state, error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            self.member_ends.add()
        self.journal.member_ended(run_id, key, state, error)

    @staticmethod
    def _recovery_queue(status: Any) -> str:
        if status.name == RUN_WORKFLOW and not has_commands(
            run_input(status).get("workflow") or {}
        ):
            return RECOVERED_AGENT_RUNS
        return RECOVERED_RUNS

    # --- no run left behind (worker.py) ------------------------------------------------------

    def executor_alive(self, executor_id: str | None) -> bool:
        """Whether the process of ``executor_id`` lives (its lock file is locked on SQLite, its
        advisory lock held on Postgres)."""
        if not executor_id:
            return False
        if self.executor_lock is not None and executor_id == self.executor_id:
            return True
        if self.journal.postgres:
            from .pg_liveness import lock_key

            return self.journal.advisory_lock_held(lock_key(executor_id))
        return executor_locked(self.home, executor_id)

    def recover_dead_now(self) -> None:
        """SQLite: take over the runs of processes that died since the last look (a server that
        just handed its runs over, say); Postgres watches its executors by itself."""
        if not self.journal.postgres:
            dead = set(dead_executors(self.home, self.executor_id))
            # and processes gone so long ago that their lock file went too
            dead |= {
                executor_id
                for executor_id in self.journal.pending_executors()
                if not self.executor_alive(executor_id)
            }
            if dead:
                self.recover(sorted(dead))

    def needs_worker(self) -> bool:
        """Whether a run waits for a process to take it: on a recovery queue, or pending on a
        dead process (and not merely waiting for the agent)."""
        if self.journal.queued_on((RECOVERED_RUNS, RECOVERED_AGENT_RUNS)):
            return True
        for executor_id, run_ids in self.journal.pending_executors().items():
            if self.executor_alive(executor_id):
                continue
            for run_id in run_ids:
                state = DBOS.get_event(run_id, "state", timeout_seconds=0) or {}
                if state.get("status") != "waiting" or self._answered(run_id, state):
                    return True
        return False

    def _answered(self, run_id: str, state: dict[str, Any]) -> bool:
        waiting = state.get("waiting") or {}
        return self.answered(run_id, str(waiting.get("step_key")))

    def hand_over(self, run_id: str) -> None:
        """After an answer to ``run_id``: make sure a live process acts on it — the process it
        is executing in, or a worker started now."""
        if run_id in self.live:
            return
        placement = self.journal.run_placement(run_id)
        if placement is None:
            return
        status, executor_id, _queue = placement
        if status == "ENQUEUED" or (status == "PENDING" and not self.executor_alive(executor_id)):
            self.start_worker()

    def start_worker(self) -> None:
        from .worker import spawn_worker

        spawn_worker(self.home, self.database_url, self.settings.project)

    def busy(self) -> bool:
        """Whether this process executes a run that is not just waiting for the agent, or a run
        waits on a recovery queue (for it, or another worker)."""
        return any(run_id not in self.waiting for run_id in list(self.live)) or (
            self.journal.queued_on((RECOVERED_RUNS, RECOVERED_AGENT_RUNS))
        )

    # --- the runs, through DBOS ------------------------------------------------------------

    def start_run(self, run_id: str, run: dict[str, Any]) -> None:
        self.steps.open(run_id)  # before its first step: a reader starting now misses none
        with SetWorkflowID(run_id):
            DBOS.start_workflow(workrail_run, run)

    def run_status(self, run_id: str, *, load_input: bool) -> Any | None:
        """DBOS's status of the run ``run_id``; None when there is no run of that id."""
        found = DBOS.list_workflows(workflow_ids=[run_id], load_input=load_input)
        return found[0] if found and found[0].name == RUN_WORKFLOW else None

    def list_runs(self, *, running_only: bool, limit: int) -> list[Any]:
        return list(
            DBOS.list_workflows(
                name=RUN_WORKFLOW,
                sort_desc=True,
                limit=limit,
                status=["PENDING", "ENQUEUED"] if running_only else None,
            )
        )

    def runs_in_flight(self) -> list[str]:
        """The ids of every run not ended (inputs and outputs left unread)."""
        return [
            status.workflow_id
            for status in DBOS.list_workflows(
                name=RUN_WORKFLOW,
                status=["PENDING", "ENQUEUED"],
                load_input=False,
                load_output=False,
            )
        ]

    def events(self, run_id: str) -> dict[str, Any]:
        return dict(DBOS.get_all_events(run_id))

    def step_results(self, run_id: str) -> list[dict[str, Any]]:
        """A run's step results, in the order they ended (from the journal: all at once)."""
        return self.journal.results(run_id)

    def cancel(self, run_id: str, reason: str) -> None:
        DBOS.update_workflow_attributes(run_id, {"cancel_reason": reason}, merge=True)
        DBOS.cancel_workflow(run_id, cancel_children=True)
        self.watch.cancel_local(run_id)

    def send(self, run_id: str, message: dict[str, Any]) -> None:
        """A message to the run waiting for the agent (its `continue` topic)."""
        DBOS.send(run_id, message, topic=CONTINUE_TOPIC)

    def cancelled(self, run_ids: list[str]) -> list[str]:
        """Of ``run_ids``, those DBOS has marked cancelled (one query of its status table, made
        by the journal on the journal's connection)."""
        return [
            run_id
            for run_id, status in self.journal.statuses(run_ids).items()
            if status == "CANCELLED"
        ]

    # --- watching the runs of this process -------------------------------------------------

    def notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def count(self, run_id: str, which: int) -> None:
        progress = self.live.get(run_id)  # a member run by another process than its run's
        if progress is not None:
            progress[which] += 1

    def change_mark(self, run_id: str) -> list[int]:
        """The counts ``wait_for_change`` compares against: take it *before* reading the run, so
        a change between that read and the wait is not missed (a run not yet executing here
        counts from zero: one that starts in between has changed)."""
        progress = self.live.get(run_id)
        return list(progress) if progress is not None else [0, 0]

    def wait_for_change(
        self,
        run_id: str,
        seconds: float,
        *,
        steps: bool,
        stop: threading.Event | None = None,
        poll: float = 0.1,
        remote: float = 0.25,
        since: list[int] | None = None,
    ) -> None:
        """Return when a run of this process changes state (or, with ``steps``, has recorded a
        step since the call, looked at every ``poll`` s), when ``seconds`` are up or ``stop`` is
        set. A run executing elsewhere can only be read again: this sleeps ``remote`` s.
        ``since``: a ``change_mark`` taken before the caller read the run."""
        progress = self.live.get(run_id)
        if progress is None:
            time.sleep(max(min(seconds, remote), 0.0))
            return
        seen = since if since is not None else list(progress)
        end = time.monotonic() + seconds
        with self.changed:
            while True:
                now = self.live.get(run_id)
                if now is None or now[0] != seen[0] or (steps and now[1] != seen[1]):
                    return
                left = end - time.monotonic()
                if left <= 0 or (stop is not None and stop.is_set()):
                    return
                self.changed.wait(min(left, poll))


class MemberEnds:
    """The ends of the queued parallel members this process executed, counted: what a run
    waiting for its members here is woken by (see `_Effects._queued`)."""

    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition()

    def mark(self) -> int:
        """Take before looking whether a member ended: `wait` returns at once if one has since."""
        return self._count

    def add(self) -> None:
        with self._changed:
            self._count += 1
            self._changed.notify_all()

    def wait(self, mark: int, seconds: float) -> None:
        with self._changed:
            if self._count == mark:
                self._changed.wait(seconds)


def _reenqueue_dead(dead: list[str], queue_of: Any) -> None:
    """The runs pending on dead executors, each re-enqueued on ``queue_of(status)``.

    DBOS's public API has no call for this (its own recovery puts them on one internal queue that
    every process dequeues, including those not allowed to run commands), so this is the one
    place that uses its private system database: ``_get_dbos_instance()._sys_db`` with
    ``get_pending_workflows(executor_id, app_version)`` and ``reenqueue_for_recovery(workflow_id,
    executor_ids, queue_name)``. tests/engine/runs/test_dbos_private_api.py checks both.
    """
    from dbos._dbos import _get_dbos_instance

    system = _get_dbos_instance()._sys_db
    for executor_id in dead:
        pending = [p.workflow_id for p in system.get_pending_workflows(executor_id, APP_VERSION)]
        if not pending:
            continue
        for status in DBOS.list_workflows(workflow_ids=pending, load_output=False):
            system.reenqueue_for_recovery(status.workflow_id, [executor_id], queue_of(status))


def _exit_if_busy() -> None:
    runtime = _current
    if runtime is None or not runtime.live:
        return
    if any(run_id not in runtime.waiting for run_id in list(runtime.live)):
        # Runs in the middle of their steps: a worker takes them over once this process is gone
        # (the steps killed here run again there), instead of waiting for some later process.
        try:
            runtime.start_worker()
        except OSError as error:
            logging.getLogger(__name__).warning("could not start a worker: %s", error)
    runtime.kill_in_flight()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def _mask_logs() -> None:
    """Secrets are masked in every log line this process writes, whichever library logs it."""
    masking = MaskingFilter()
    for name in ("", "dbos", "workrail_engine", "workrail_mcp"):
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(masking)


@DBOS.step(name="workrail_clock")
def _clock() -> float:
    return time.time()


_UNRECORDED = object()


class _RunGroups:
    """The executor's process-group log (`InFlight`) as a run's steps tell it (`StepGroups`):
    a group's ``-`` line is written while the run's next step runs (`while_running`)."""

    def __init__(self, groups: InFlight, later: Callable[..., None]) -> None:
        self._groups, self._later = groups, later

    def expect(self, token: str) -> None:
        self._groups.expect(token)

    def add(self, pgid: int, token: str) -> None:
        self._groups.add(pgid, token)

    def not_spawned(self, token: str) -> None:
        self._groups.not_spawned(token)

    def ended(self, pgid: int) -> None:
        self._groups.forget(pgid)
        self._later(self._groups.log_end, pgid)


class _Effects:
    """The walk's side effects, each one durable: attempts and results in the step journal; the
    run's state, agent messages, queued members and clock reads through DBOS."""

    def __init__(
        self,
        runtime: DurableRuntime,
        run_id: str,
        secret_names: list[str],
        member: str | None = None,
        recorded: Recorded | None = None,
        while_running: WhileRunning | None = None,
    ) -> None:
        """``member``: the step key of the parallel member these effects are for (on the queue);
        ``recorded``: what the journal holds for it, when already read (with its claim);
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
        self.on_dbos_queue: bool | None = None  # members went through DBOS's queue (see _queued)
        # the run's status read with the last result (or with the above), not yet used
        self.status: StatusRead | None = lambda: status
        self.while_running = while_running
        self.prepared: PreparedCommand | None = None  # the next step's command (`prepare`)
        self.cancel_flag = threading.Event()  # set by the cancel watch: the attempts share it
        self.groups = _RunGroups(runtime.groups, self._later)  # what the attempts tell the log

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
                self._later(
                    self.runtime.steps.add, self.run_id, "started", key, title=step.get("title")
                )
            outcome = self._run(key, step, values, attempt, deadline)
        self.journal.add_attempt(self.run_id, key, attempt, outcome)
        return outcome

    def _later(self, work: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        """``work(*args, **kwargs)`` while the walk's next step runs (`while_running`), or now."""
        if self.while_running is None:
            work(*args, **kwargs)
        else:
            self.while_running.add(functools.partial(work, *args, **kwargs))

    def prepare(self, step: dict[str, Any]) -> None:
        # secrets as they are now: the attempt uses this only if they are the same then
        self.prepared = prepare_command(
            step, SecretSet.from_environment(self.secret_names), self.environment
        )

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
        runtime = self.runtime
        flag = runtime.watch.watch(self.run_id, self.cancel_flag)
        try:
            return run_attempt(
                step,
                values,
                self.secret_names,
                runtime.settings,
                deadline,
                flag,
                self.groups,
                environment=self.environment,
                # On Postgres the check waits for the previous step's result to be committed
                # (`Journal.add_result`): last before the spawn, so the rendering above overlaps
                # the round trip; nothing starts after a cancel or before the result is durable.
                before_spawn=self._cancel_check,
                while_running=self.while_running,
                prepared=self.prepared,
            )
        finally:
            runtime.watch.release(self.run_id, flag)

    def parallel(
        self,
        members: list[tuple[str, dict[str, Any], dict[str, Any]]],
        limit: int,
        deadline: float | None,
    ) -> list[dict[str, Any]]:
        self._flush()
        if self.runtime.members_on_queue:
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
        self.record(result)
        self._written()  # durable before the member's end is told
        return result

    def _queued(
        self,
        members: list[tuple[str, dict[str, Any], dict[str, Any]]],
        limit: int,
        deadline: float | None,
    ) -> list[dict[str, Any]]:
        """Members on the member queue (member_queue.py), at most ``limit`` queued or running at
        a time (a sliding window): the limit holds for the run whichever processes take them.

        No DBOS call: a member is a row queued in the journal's database; the window learns its
        end from its result row (or its row's end, for one that ended without a result), read in
        one query when a member ends — told at once by this process's member queue, for members
        of any process — or every `MEMBER_LOOK` s in case a notification was missed.
        A run an earlier version left in flight with members on DBOS's queue goes on there
        (`_queued_on_dbos`): its replay must make the DBOS calls it recorded."""
        if self.on_dbos_queue is None:
            self.on_dbos_queue = self.journal.had_children(self.run_id)
        if self.on_dbos_queue:
            return self._queued_on_dbos(members, limit, deadline)
        results: list[dict[str, Any]] = [{} for _ in members]
        waiting = list(enumerate(members))
        running: dict[str, int] = {}  # step key -> index
        ended = self.runtime.member_ends
        look = MEMBER_POLL if self.runtime.member_queue is None else MEMBER_LOOK
        while waiting or running:
            queued: list[tuple[str, str]] = []
            while waiting and len(running) < limit:
                index, (key, step, values) = waiting.pop(0)
                member = {
                    "step": step,
                    "values": values,
                    "deadline": deadline,
                    "secret_names": self.secret_names,
                }
                queued.append((key, json.dumps(member)))
                running[key] = index
            if queued:
                self.journal.enqueue_members(self.run_id, queued)
            seen = ended.mark()
            found = self.journal.queued_member_ends(self.run_id, running)
            if not found:
                ended.wait(seen, look)
                continue
            for name, end in found.items():
                if name is None or end == "cancelled":  # the run was cancelled
                    raise DBOSWorkflowCancelledError(f"run {self.run_id} was cancelled")
                if not isinstance(end, dict):
                    raise RuntimeError(f"the parallel member {name} failed: {end}")
                results[running.pop(name)] = end
                self.recorded.add(name)
        return results

    def _queued_on_dbos(
        self,
        members: list[tuple[str, dict[str, Any], dict[str, Any]]],
        limit: int,
        deadline: float | None,
    ) -> list[dict[str, Any]]:
        """Members as children on DBOS's step queue (before the member queue), at most ``limit``
        queued or running at a time.

        The window's only DBOS calls are the enqueues, in the members' order, so a replay makes
        the same calls whatever order the members ended in. Each member records its result in
        the journal before its workflow ends; the window reads those rows (and the statuses of
        members that ended without one) in one query, when a member of this process ends or
        every `MEMBER_POLL` seconds for members taken by another process. DBOS's ``wait_first``
        and ``get_result`` cost two checkpointed steps per member in this thread (≈ 25 ms a
        member on a loaded machine): the group waited for its own bookkeeping."""
        results: list[dict[str, Any]] = [{} for _ in members]
        waiting = list(enumerate(members))
        running: dict[str, tuple[int, str]] = {}  # member workflow id -> (index, step key)
        ended = self.runtime.member_ends
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
                running[handle.workflow_id] = (index, key)
            seen = ended.mark()
            found = self.journal.member_ends(self.run_id, running)
            if not found:
                ended.wait(seen, MEMBER_POLL)
                continue
            for workflow_id, end in found.items():
                if workflow_id == self.run_id:  # cancelled (with its members)
                    raise DBOSWorkflowCancelledError(f"run {self.run_id} was cancelled")
                index, key = running.pop(workflow_id)
                # Ended without a result (an error, a cancel): DBOS raises what the member raised.
                results[index] = (
                    end
                    if isinstance(end, dict)
                    else DBOS.retrieve_workflow(workflow_id).get_result()
                )
                self.recorded.add(key)
        return results

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
        self._later(self.runtime.steps.add, self.run_id, "ended", key, status=result["status"])
        # Counted, not notified: a waiter that shows progress looks every 0.1 s; waking it (and
        # its read of the whole run) at every step would slow a run of short commands.
        self.runtime.count(self.run_id, 1)

    def state(self, state: dict[str, Any]) -> None:
        self._flush()
        DBOS.set_event("state", self.masks.mask(state))
        if state.get("status") == "waiting":
            self.runtime.waiting.add(self.run_id)
            waiting = state.get("waiting") or {}
            self.runtime.steps.add(
                self.run_id,
                "waiting",
                str(waiting.get("step_key")),
                title=(waiting.get("step") or {}).get("title"),
            )
        else:
            self.runtime.waiting.discard(self.run_id)
        self.runtime.count(self.run_id, 0)
        self.runtime.notify()


@DBOS.workflow(name="workrail_run")
def workrail_run(run: dict[str, Any]) -> dict[str, Any]:
    run_id = DBOS.workflow_id
    if run_id is None:
        raise RuntimeError("workrail_run runs only as a DBOS workflow")
    runtime = current()
    workflow = run["workflow"]
    runtime.live[run_id] = [0, 0]
    runtime.steps.open(run_id)  # a run recovered here (started elsewhere) has none yet
    while_running = WhileRunning()
    effects = _Effects(runtime, run_id, declared_secrets(workflow), while_running=while_running)
    walker = RunWalker(
        workflow,
        run["parameters"],
        run.get("context") or {},
        effects,
        deadline=run.get("deadline"),
        parallel_limit=run.get("parallel_limit"),
        masked_secrets={name: "***" for name in effects.secret_names},
        while_running=while_running,
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
        while_running.run()  # a run stopped by a cancel (or a crash of its walk) too
        runtime.live.pop(run_id, None)
        runtime.waiting.discard(run_id)
        runtime.steps.close(run_id)
        runtime.notify()


@DBOS.workflow(name="workrail_member")
def workrail_member(
    run_id: str,
    key: str,
    step: dict[str, Any],
    values: dict[str, Any],
    deadline: float | None,
    secret_names: list[str],
) -> dict[str, Any]:
    runtime = current()
    try:
        return _Effects(runtime, run_id, secret_names, key).member(key, step, values, deadline)
    finally:
        runtime.member_ends.add()
