"""No run left behind: the runs of dead processes handed to living ones, and a worker started
when a run needs a process to act on it (worker.py; docs/runs.md, "No run left behind").

A dead executor's runs go back on a recovery queue, where one living process takes each and
resumes it (DBOS replays it from its journal). DBOS's own recovery queue is dequeued by every
process, including those not allowed to run commands: runs with command steps go to a queue only
processes allowed to run them listen to, the others to one every process listens to. Which
executors are dead: on SQLite, those whose lock file is no longer locked; on Postgres, those
whose advisory lock is no longer held (pg_liveness.py), watched by every process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbos import DBOS

from .. import sql_store
from ..executor_liveness import dead_executors, executor_locked, forget, stop_orphans
from ..plan import has_commands
from ..run_results import run_input

if TYPE_CHECKING:
    from .runtime import DurableRuntime

__all__ = [
    "APP_VERSION",
    "RECOVERED_AGENT_RUNS",
    "RECOVERED_RUNS",
    "busy",
    "executor_alive",
    "hand_over",
    "needs_worker",
    "recover",
    "recover_dead_now",
]

APP_VERSION = "workrail-runs-2"  # fixed: DBOS only recovers runs started by the same version
RECOVERED_RUNS = "workrail-recovered-runs"
RECOVERED_AGENT_RUNS = "workrail-recovered-agent-runs"
RECOVERY_QUEUES = (RECOVERED_RUNS, RECOVERED_AGENT_RUNS)


def recover(runtime: DurableRuntime, dead: list[str]) -> None:
    """Hand the runs of dead executors to the living: each goes back on a recovery queue (a
    member of a parallel group back on the member queue), where one process takes it."""
    stop_orphans(runtime.home, dead)  # steps of a killed process outlive it: stop them first
    _reenqueue_dead(dead)
    if runtime.journal.postgres:
        runtime.journal.requeue_members(dead)
    forget(runtime.home, dead)


def executor_alive(runtime: DurableRuntime, executor_id: str | None) -> bool:
    """Whether the process of ``executor_id`` lives (its lock file is locked on SQLite, its
    advisory lock held on Postgres)."""
    if not executor_id:
        return False
    if runtime.executor_lock is not None and executor_id == runtime.executor_id:
        return True
    if runtime.journal.postgres:
        from ..pg_liveness import lock_key  # psycopg: loaded on a Postgres store only

        return runtime.journal.advisory_lock_held(lock_key(executor_id))
    return executor_locked(runtime.home, executor_id)


def recover_dead_now(runtime: DurableRuntime) -> None:
    """Take over the runs of processes that died since the last look (a server that just handed
    its runs over, say). On Postgres, a check of the liveness watch's, now: a process that left
    is claimed at once, a dead one once its grace is over (pg_liveness.py). Raises the store's
    error once every check has failed for longer than a lost connection is tried again
    (`sql_store.RECONNECT_FOR`): a worker whose runs all wait on the agent would else never meet
    the outage on any other call, and stay for ever."""
    if runtime.journal.postgres:
        if runtime.liveness is not None:
            runtime.liveness.check(lambda dead: recover(runtime, dead))
            runtime.liveness.raise_if_unreachable(sql_store.RECONNECT_FOR)
        return
    dead = set(dead_executors(runtime.home, runtime.executor_id))
    # and processes gone so long ago that their lock file went too
    dead |= {
        executor_id
        for executor_id in runtime.journal.pending_executors()
        if not executor_alive(runtime, executor_id)
    }
    if dead:
        recover(runtime, sorted(dead))


def needs_worker(runtime: DurableRuntime) -> bool:
    """Whether a run waits for a process to take it: on a recovery queue, or pending on a dead
    process (and not merely waiting for the agent)."""
    if runtime.journal.queued_on(RECOVERY_QUEUES):
        return True
    for executor_id, run_ids in runtime.journal.pending_executors().items():
        if executor_alive(runtime, executor_id):
            continue
        for run_id in run_ids:
            state = DBOS.get_event(run_id, "state", timeout_seconds=0) or {}
            if state.get("status") != "waiting" or _answered(runtime, run_id, state):
                return True
    return False


def _answered(runtime: DurableRuntime, run_id: str, state: dict[str, Any]) -> bool:
    waiting = state.get("waiting") or {}
    return runtime.answered(run_id, str(waiting.get("step_key")))


def hand_over(runtime: DurableRuntime, run_id: str) -> None:
    """After an answer to ``run_id``: make sure a live process acts on it — the process it is
    executing in, or a worker started now."""
    if run_id in runtime.progress.live:
        return
    placement = runtime.journal.run_placement(run_id)
    if placement is None:
        return
    status, executor_id, _queue = placement
    if status == "ENQUEUED" or (status == "PENDING" and not executor_alive(runtime, executor_id)):
        runtime.start_worker()


def busy(runtime: DurableRuntime) -> bool:
    """Whether this process executes a run that is not just waiting for the agent, or a run
    waits on a recovery queue (for it, or another worker)."""
    return runtime.progress.working() or runtime.journal.queued_on(RECOVERY_QUEUES)


def _recovery_queue(status: Any) -> str:
    """Runs with command steps wait for a process allowed to run them; the others for any."""
    if has_commands(run_input(status).get("workflow") or {}):
        return RECOVERED_RUNS
    return RECOVERED_AGENT_RUNS


def _reenqueue_dead(dead: list[str]) -> None:
    """The runs pending on dead executors, each re-enqueued on its recovery queue.

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
            system.reenqueue_for_recovery(
                status.workflow_id, [executor_id], _recovery_queue(status)
            )
