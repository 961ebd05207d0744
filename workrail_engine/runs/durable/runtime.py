"""DBOS in this process: one `DurableRuntime` per process (`launch` makes it or returns it; the
`RunService` owns it), its launch and shutdown, the run's DBOS workflow (`workrail_run`), and every
DBOS call the service makes. What it hands to the other modules of the package: recovery and
hand-over (recovery.py), the runs' progress (progress.py), the walk's effects (effects.py) and a
parallel group's members (members.py).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbos import DBOS, DBOSPortableJSONSerializer, SetWorkflowID
from dbos._error import DBOSWorkflowCancelledError  # what DBOS itself catches as "cancelled"

from ...definition.declared import declared_secrets
from .. import run_logs
from ..cancel_watch import CancelWatch
from ..commands import AttemptSettings
from ..executor_liveness import ExecutorLock, InFlight, dead_executors, forget, stop_orphans
from ..fork import FORKED_FROM, fork_walk, kept_prefix
from ..journal import Journal, Recorded
from ..run_results import stored_input, with_definition
from ..run_status import CANCELLED, IN_FLIGHT
from ..secrets import MaskingFilter
from ..sqlite_store import DATABASE, make_private, sqlite_engine
from ..step_events import StepEvents
from ..walker import RunWalker
from ..while_running import WhileRunning
from ..worker import spawn_worker
from . import recovery
from .effects import CONTINUE_TOPIC, RunEffects
from .members import MemberEnds
from .progress import RunProgress
from .recovery import APP_VERSION, RECOVERED_AGENT_RUNS, RECOVERY_QUEUES

if TYPE_CHECKING:
    from ..member_queue import MemberQueue
    from ..pg_liveness import PostgresLiveness

__all__ = [
    "APP_VERSION",
    "DurableRuntime",
    "NotLaunched",
    "current",
    "launch",
    "running",
    "workrail_run",
]

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
        # Current before DBOS starts: what it runs during the launch (a run recovered) looks the
        # runtime up at once.
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
        runtime.shutdown(exiting=True)


class DurableRuntime:
    """DBOS in this process and what the runs executing here share: the settings of their
    attempts, the cancel watch, the process groups in flight, the step journal, the member queue
    and the Postgres liveness, and the runs' progress."""

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
        self.answered: Callable[[str, str], bool] = lambda _run, _step: False
        self.url = database_url or f"sqlite:///{home / DATABASE}"
        self.settings = settings
        self.watch = CancelWatch(self.cancelled)
        self.progress = RunProgress()  # what a waiter here watches
        self.steps = StepEvents()  # the steps of the runs executing here, as they start and end
        self.member_ends = MemberEnds()
        self.executor_lock: ExecutorLock | None = None
        self._journal: Journal | None = None
        self._groups: InFlight | None = None
        self.members_on_queue = False  # Postgres: a parallel group's members on the member queue
        self.member_queue: MemberQueue | None = None  # this process takes members from it
        self.liveness: PostgresLiveness | None = None  # on a Postgres store
        self._worker: subprocess.Popen[bytes] | None = None  # the last worker started here
        self._starting_worker = threading.Lock()
        # run id → the definition of a run started here, until its walk takes it (`start_run`)
        self.starting: dict[str, dict[str, Any]] = {}

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
        self._journal.hear_cancels()  # (DBOS's tables exist now; Postgres only)
        if self.settings.allow_commands and self.members_on_queue:
            from ..member_queue import MemberQueue  # psycopg: loaded on a Postgres store only

            self.member_queue = MemberQueue(
                self.url, lock.executor_id, self._run_member, self.member_ends.add
            )
            self.member_queue.start()
        for queue in RECOVERY_QUEUES:
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
            recovery.recover(self, dead)
        # (A process that executes nothing leaves them to the worker it starts below: handing
        # back a run that only waits for the agent would have a worker replay it for nothing.)
        if not self.executes and self.needs_worker():
            self.start_worker()

    def _watch_postgres(self, executor_id: str) -> None:
        """Register this executor as alive in the shared store, and recover the runs of
        executors found dead (`WORKRAIL_LIVENESS_INTERVAL`, default every 5 s)."""
        from ..pg_liveness import PostgresLiveness  # psycopg: loaded on a Postgres store only

        self.liveness = PostgresLiveness(
            self.url,
            executor_id,
            interval=float(os.environ.get("WORKRAIL_LIVENESS_INTERVAL", "5")),
        )
        self.liveness.start()
        self.liveness.watch(functools.partial(recovery.recover, self))

    def shutdown(self, *, exiting: bool = False) -> None:
        """Stop DBOS in this process (its background threads too) after a clean finish of the
        caller's work; runs still in flight are left to be recovered by the next process.
        ``exiting``: the process ends now (its exit hook), so on Postgres the runs it leaves are
        taken over at the next check of a living process rather than after the grace."""
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
            if not self.progress.live and not self._owns_pending():
                for part in (self._groups, self._journal, self.liveness):
                    if part is not None:
                        part.close()
                if self.executor_lock is not None:
                    self.executor_lock.release()
            elif exiting and self.liveness is not None:
                self.liveness.leaving()
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
        pending = self.progress.live or self._owns_pending()
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

    def leave(self) -> None:
        """For a process about to exit at once (``os._exit``) with runs in flight: their steps'
        processes are killed (`kill_in_flight`), and on Postgres this executor is marked as
        leaving, so that a living process takes the runs over at its next check rather than
        after the grace a crash gets (pg_liveness.py)."""
        self.kill_in_flight()
        if self.liveness is not None:
            self.liveness.leaving()

    # --- no run left behind (recovery.py, worker.py) ---------------------------------------

    def recover_dead_now(self) -> None:
        recovery.recover_dead_now(self)

    def needs_worker(self) -> bool:
        return recovery.needs_worker(self)

    def hand_over(self, run_id: str) -> None:
        recovery.hand_over(self, run_id)

    def busy(self) -> bool:
        return recovery.busy(self)

    def executor_alive(self, executor_id: str | None) -> bool:
        return recovery.executor_alive(self, executor_id)

    def start_worker(self) -> None:
        """A worker (``workrail worker``) for this store: it takes over the runs that wait for a
        process and exits once none is left. Not a second one while the last one started here
        lives: it takes every run that waits, and a follower hands a run over again every 2 s
        until it moves (on Postgres a dead process's runs wait for a liveness check)."""
        with self._starting_worker:
            if self._worker is not None and self._worker.poll() is None:
                return
            self._worker = spawn_worker(self.home, self.database_url, self.settings.project)

    def _run_member(
        self, run_id: str, key: str, member: dict[str, Any], recorded: Recorded | None
    ) -> None:
        """A member taken from the member queue, in a thread of its own: run (or replay) it, then
        mark its row ended (or cancelled, or failed with its error) for the run waiting on it."""
        state, error = "ended", None
        try:
            RunEffects(self, run_id, member["secret_names"], key, recorded).member(
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

    # --- the runs, through DBOS ------------------------------------------------------------

    def start_run(self, run_id: str, run: dict[str, Any]) -> None:
        """Start the run ``run_id`` of the input ``run`` (its "workflow" the definition)."""
        self.steps.open(run_id)  # before its first step: a reader starting now misses none
        # Executing here from now on, not from its walk's first line: a waiter that comes before
        # the walk (the caller's `wait`, at once) waits for its changes, not for a remote run's.
        self.progress.started(run_id)
        # The walk here takes the definition as it is; DBOS stores it as text (`stored_input`).
        self.starting[run_id] = run["workflow"]
        try:
            with SetWorkflowID(run_id):
                DBOS.start_workflow(workrail_run, stored_input(run))
        except BaseException:
            self.starting.pop(run_id, None)
            self.progress.ended(run_id)
            raise

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
                status=list(IN_FLIGHT) if running_only else None,
            )
        )

    def runs_in_flight(self) -> list[str]:
        """The ids of every run not ended (inputs and outputs left unread)."""
        return [
            status.workflow_id
            for status in DBOS.list_workflows(
                name=RUN_WORKFLOW,
                status=list(IN_FLIGHT),
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
            if status == CANCELLED
        ]


@DBOS.workflow(name=RUN_WORKFLOW)
def workrail_run(run: dict[str, Any]) -> dict[str, Any]:
    run_id = DBOS.workflow_id
    if run_id is None:
        raise RuntimeError("workrail_run runs only as a DBOS workflow")
    runtime = current()
    started_here = runtime.starting.pop(run_id, None)
    run = with_definition(run) if started_here is None else {**run, "workflow": started_here}
    workflow = run["workflow"]
    runtime.progress.started(run_id)
    runtime.steps.open(run_id)  # a run recovered here (started elsewhere) has none yet
    while_running = WhileRunning()
    parameters, kept, switches = run["parameters"], None, None
    forked_from = run.get(FORKED_FROM)
    if forked_from:
        # before the effects read what the journal holds: the kept rows are among it
        kept = kept_prefix(
            forked_from,
            runtime.journal.keep(
                run_id, forked_from["run_id"], forked_from["step"], forked_from["kept"]
            ),
        )
        walk = fork_walk(forked_from, list(kept.results))
        parameters, switches = walk.parameters, walk.switches  # the parent's, up to the fork
    effects = RunEffects(runtime, run_id, declared_secrets(workflow), while_running=while_running)
    walker = RunWalker(
        workflow,
        parameters,
        run.get("context") or {},
        effects,
        deadline=run.get("deadline"),
        parallel_limit=run.get("parallel_limit"),
        masked_secrets={name: "***" for name in effects.secret_names},
        kept=kept,
        switches=switches,
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
        effects.release_watch()
        while_running.run()  # a run stopped by a cancel (or a crash of its walk) too
        runtime.steps.close(run_id)
        runtime.progress.ended(run_id)


def _exit_if_busy() -> None:
    runtime = _current
    if runtime is None or not runtime.progress.live:
        return
    if runtime.progress.working():
        # Runs in the middle of their steps: a worker takes them over once this process is gone
        # (the steps killed here run again there), instead of waiting for some later process.
        try:
            runtime.start_worker()
        except OSError as error:
            logging.getLogger(__name__).warning("could not start a worker: %s", error)
    runtime.leave()
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
