"""Runs as DBOS workflows: every attempt a checkpointed step, every parallel member a queued child.

Importing this module imports DBOS (about half a second), so only the service imports it, and only
once a run is asked for. The store is DBOS's system database: SQLite under ``WORKRAIL_HOME`` by
default, Postgres when ``WORKRAIL_DATABASE_URL`` names one. Values are stored as JSON (DBOS's
portable serializer), so what is in the database is readable — and the tests can prove that no
secret is in it.

A run's record: the workflow input (definition pinned at start, parameters, deadline), one
checkpoint per attempt, the events ``state`` (status, what it waits for) and ``results-NNNNN``
(step results in chunks, so a 1,000-step run does not rewrite all its results at every step).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID
from dbos._serialization import DBOSPortableJSONSerializer

from .cancel_watch import CancelWatch
from .commands import AttemptSettings, run_attempt
from .executors import ExecutorLock, InFlight, dead_executors, forget, stop_orphans
from .model import step_result
from .secrets import MaskingFilter, SecretSet
from .sqlite_store import sqlite_engine
from .walker import RunWalker, run_with_retries

__all__ = ["APP_VERSION", "RESULTS_CHUNK", "launch", "exit_promptly_on_shutdown", "live_results", "live_run_ids", "shutdown", "start_run", "wait_for_change", "workrail_member", "workrail_run"]

APP_VERSION = "workrail-runs-1"  # fixed: DBOS only recovers runs started by the same version
RESULTS_CHUNK = 25
PUBLISH_AFTER = 0.2  # seconds of step time: slower steps are stored (and shown) one by one
STEP_QUEUE = "workrail-steps"  # the members of parallel groups, shared by every process
CONTINUE_TOPIC = "continue"
WAIT_CHUNK = 30.0  # seconds

_INCARNATION = uuid.uuid4().hex  # this process; an attempt marked by another one was interrupted
_settings: AttemptSettings | None = None
_watch: CancelWatch | None = None
_groups: InFlight | None = None
# Results of the runs executing in this process, including those not stored yet: a reader in
# this process sees every step at once; other processes see them at the next publish.
_live: dict[str, list[dict]] = {}
_lock = threading.Lock()


def _cancelled(run_ids: list[str]) -> list[str]:
    statuses = DBOS.list_workflows(workflow_ids=run_ids, load_input=False, load_output=False)
    return [s.workflow_id for s in statuses if s.status == "CANCELLED"]


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
    global _settings, _watch, _launched
    if _launched is not None:
        if _launched[0] != home:
            raise RuntimeError(f"this process already uses the run store {_launched[0]}")
        _settings = settings
        return _launched[1]
    _settings = settings
    _watch = CancelWatch(_cancelled)
    lock = ExecutorLock(home)
    url = database_url or f"sqlite:///{home / 'runs.sqlite'}"
    DBOS(config={
        "name": "workrail",
        "system_database_url": url,
        "system_database_engine": sqlite_engine(url) if url.startswith("sqlite") else None,
        "application_version": APP_VERSION,
        "executor_id": lock.executor_id,
        "serializer": DBOSPortableJSONSerializer(),
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.1,
    })
    if not settings.allow_commands:
        DBOS.listen_queues([])  # leave command steps to processes allowed to run them
    _mask_logs()
    DBOS.launch()
    if settings.allow_commands:
        DBOS.register_queue(STEP_QUEUE, polling_interval_sec=0.05, on_conflict="always_update")
    dead = dead_executors(home, lock.executor_id)
    if dead:
        stop_orphans(home, dead)  # steps of a killed process outlive it (own sessions): stop them first
        DBOS._recover_pending_workflows(dead)
        forget(home, dead)
    global _groups, _executor_lock
    _groups = InFlight(lock)
    _executor_lock = lock
    _launched = (home, lock.executor_id)
    return lock.executor_id


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
    global _launched, _groups, _executor_lock
    with _lock:
        if _launched is None:
            return
        DBOS.destroy(workflow_completion_timeout_sec=0)
        if _watch is not None:
            _watch.stop()
        if _groups is not None:
            _groups.close()
        if _executor_lock is not None and not _live:
            _executor_lock.release()
        _launched = _groups = _executor_lock = None


_changed = threading.Condition()  # notified when a run of this process changes status


def _notify() -> None:
    with _changed:
        _changed.notify_all()


def wait_for_change(run_id: str, local: float, remote: float) -> None:
    """Sleep until a run of this process changes status (or ``local`` s pass); a run elsewhere
    can only be polled, every ``remote`` s."""
    if run_id in _live:
        with _changed:
            _changed.wait(local)
    else:
        time.sleep(remote)


def _mask_logs() -> None:
    """Secrets are masked in every log line this process writes, whichever library logs it."""
    masking = MaskingFilter()
    for name in ("", "dbos", "workrail_engine", "workrail_mcp"):
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(masking)


def live_run_ids() -> list[str]:
    return list(_live)


def live_results(run_id: str) -> list[dict] | None:
    """The results of a run executing in this process (a copy), or None."""
    results = _live.get(run_id)
    return list(results) if results is not None else None


def watch() -> CancelWatch:
    assert _watch is not None, "durable.launch() first"
    return _watch


def start_run(run_id: str, run: dict[str, Any]) -> None:
    with SetWorkflowID(run_id):
        DBOS.start_workflow(workrail_run, run)


@DBOS.step(name="workrail_mark")
def _mark(key: str, attempt: int) -> str:
    return _INCARNATION


@DBOS.step(name="workrail_clock")
def _clock() -> float:
    return time.time()


@DBOS.step(name="workrail_attempt")
def _attempt(run_id: str, key: str, step: dict, values: dict, attempt: int, deadline: float | None,
             secret_names: list[str], marker: str | None) -> dict:
    if marker is not None and marker != _INCARNATION:
        return {"status": "interrupted", "output": None, "duration": 0.0, "finished_at": time.time(),
                "error": "the process running this step (idempotent: false) stopped while it was in "
                         "flight; it was not run again"}
    assert _settings is not None
    flag = watch().watch(run_id)
    try:
        return run_attempt(step, values, secret_names, _settings, deadline, flag, on_start=_groups.add if _groups else None,
                           on_end=_groups.remove if _groups else None)
    finally:
        watch().release(run_id, flag)


class _Effects:
    """The walk's side effects, each one durable (a DBOS step, event, message or sleep)."""

    def __init__(self, run_id: str, secret_names: list[str], *, live: bool = False) -> None:
        self.run_id = run_id
        self.secret_names = secret_names
        self.results: list[dict] = []
        self.published = 0  # how many results are stored
        self.unpublished_time = 0.0  # step time since then (checkpointed durations: deterministic)
        if live:
            _live[run_id] = self.results
        self.masks = SecretSet.from_environment(secret_names)

    def attempt(self, key: str, step: dict, values: dict, attempt: int, deadline: float | None) -> dict:
        marker = _mark(key, attempt) if step.get("idempotent") is False else None
        return _attempt(self.run_id, key, step, values, attempt, deadline, self.secret_names, marker)

    def parallel(self, members: list[tuple[str, dict, dict]], limit: int, deadline: float | None) -> list[dict]:
        """Members as children on the shared step queue, at most ``limit`` queued or running at a
        time (a sliding window): the limit holds for the run whichever processes dequeue them."""
        self.publish()
        results: list[dict] = [{} for _ in members]
        waiting = list(enumerate(members))
        running: dict[str, tuple[int, Any]] = {}
        while waiting or running:
            while waiting and len(running) < limit:
                index, (key, step, values) = waiting.pop(0)
                handle = DBOS.enqueue_workflow(STEP_QUEUE, workrail_member, self.run_id, key, step, values,
                                               deadline, self.secret_names)
                running[handle.workflow_id] = (index, handle)
            done = DBOS.wait_first([h for _, h in running.values()], polling_interval_sec=0.02)
            index, handle = running.pop(done.workflow_id)
            results[index] = handle.get_result(polling_interval_sec=0.02)
        return results

    def wait(self, key: str, waiting: dict, deadline: float | None) -> dict | None:
        while True:
            remaining = WAIT_CHUNK if deadline is None else deadline - _clock()
            if remaining <= 0:
                return None
            # In chunks: a cancelled run notices at the next one (each timeout is a checkpoint,
            # so a replay goes through the same chunks).
            message = DBOS.recv(CONTINUE_TOPIC, timeout_seconds=min(remaining, WAIT_CHUNK))
            if isinstance(message, dict) and message.get("step_key") == key:
                return self.masks.mask(message)

    def sleep(self, seconds: float) -> None:
        self.publish()
        DBOS.sleep(seconds)

    def record(self, result: dict) -> None:
        self.results.append(self.masks.mask(result))
        self.unpublished_time += result.get("duration") or 0.0
        full = len(self.results) % RESULTS_CHUNK == 0
        if full or self.unpublished_time >= PUBLISH_AFTER:
            self.publish()

    def publish(self) -> None:
        """Store the results not yet stored (their chunk). Called at points that depend only on
        checkpointed values — a full chunk, enough step time, before any pause, at the end — so
        a replay after a crash makes the same calls in the same order, as DBOS requires."""
        if len(self.results) == self.published:
            return
        first = self.published // RESULTS_CHUNK
        last = (len(self.results) - 1) // RESULTS_CHUNK
        for chunk in range(first, last + 1):
            DBOS.set_event(f"results-{chunk:05d}", self.results[chunk * RESULTS_CHUNK:(chunk + 1) * RESULTS_CHUNK])
        self.published = len(self.results)
        self.unpublished_time = 0.0

    def state(self, state: dict) -> None:
        self.publish()
        DBOS.set_event("state", self.masks.mask(state))
        _notify()


@DBOS.workflow(name="workrail_run")
def workrail_run(run: dict) -> dict:
    run_id = DBOS.workflow_id
    assert run_id is not None
    workflow = run["workflow"]
    effects = _Effects(run_id, list(workflow.get("secrets") or []), live=True)
    walker = RunWalker(workflow, run["parameters"], run.get("context") or {}, effects,
                       deadline=run.get("deadline"), parallel_limit=run.get("parallel_limit"),
                       masked_secrets={name: "***" for name in effects.secret_names})
    try:
        try:
            summary = walker.run()
        except (ValueError, KeyError, TypeError) as exc:  # a definition the lint should have refused
            summary = {"status": "failed", "error_message": f"the run stopped on a malformed workflow: {exc}"}
        summary = {**effects.masks.mask(summary), "finished_at": _clock()}
        effects.state(summary)
        return summary
    finally:
        _live.pop(run_id, None)
        _notify()


@DBOS.workflow(name="workrail_member")
def workrail_member(run_id: str, key: str, step: dict, values: dict, deadline: float | None,
                    secret_names: list[str]) -> dict:
    effects = _Effects(run_id, secret_names)
    try:
        return run_with_retries(effects, key, step, values, deadline)
    except (ValueError, KeyError, TypeError) as exc:
        return step_result(key, "failed", None, 0.0, step_id=step.get("id"), error=str(exc))
