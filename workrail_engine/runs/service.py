"""`RunService`: start, watch, continue, cancel and list runs — the one facade the MCP tools and the
CLI call. Synchronous (DBOS's calls refuse to run on an event loop); async callers use a thread.

DBOS is imported and launched on first need (`start()`), never at import, so a server answers
``initialize`` before any of it happens.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..answers.confirmation import Confirm
from ..answers.record import (
    AnswerNotApplied,
    answer_facts,
    earlier_answer,
    masked_answer,
    masks_of,
    with_history,
)
from ..answers.store import Answer
from ..answers.verdict import judge
from ..cyclic_collection import cyclic_collection_paused
from ..definition.content_hash import workflow_hash
from ..definition.steps import executable_steps, find_step
from ..errors import InvalidParams, InvalidRunState, RunNotFound, SecurityViolation, StorageError
from ..result_shapes import BlockedFields, Cancelled, RunResult, RunSummary
from .answer_delivery import MESSAGE, crash_point, deliver, deliver_again, deliver_recorded_answers
from .commands import AttemptSettings
from .fork import FORKED_FROM, fork_point, forked_from_input
from .params import check_parameters
from .plan import has_prompts, plan_run, run_needs
from .resolve import database_url, store_home
from .run_results import ACTIVE, run_input, run_result
from .run_status import FAILED, IN_FLIGHT, run_status
from .step_events import StepFeedRead
from .walker import condition_context
from .workspace import check_sandbox

if TYPE_CHECKING:
    from ..answers.blockers import Blocked
    from ..sessions.service import SessionService, SessionStep
    from .durable import DurableRuntime

__all__ = ["RunOptions", "RunService"]


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
        executes: bool = True,
    ) -> None:
        """``server``: this process serves clients and should end promptly when asked to, even
        with runs in flight (see `DurableRuntime.exit_promptly_on_shutdown`). ``executes``:
        false for a process that only reads and answers runs (the CLI's `runs`, `run-status`,
        `continue`, `cancel`): it executes none, and hands a run that needs an executor to a
        worker (`runs/worker.py`)."""
        self.project = project
        self.settings = AttemptSettings(
            project=project, allow_commands=allow_commands, sandbox=sandbox
        )
        self.home = home
        self.database = database
        self.server = server
        self.executes = executes
        # DBOS in this process and everything the runs share; every DBOS call goes through it.
        self.runtime: DurableRuntime | None = None
        self._lock = threading.Lock()
        self._inputs = _RunInputs()
        self._sessions: SessionService | None = None
        self._making_sessions = threading.Lock()

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Launch the durable layer (and recover dead processes' runs); idempotent."""
        with self._lock:
            if self.runtime is not None:
                return
            home = self.home or store_home()
            # DBOS, SQLAlchemy and the store are ~100,000 objects kept for the process's life:
            # a full pass of the collector over them (30-300 ms here) landed on a run's steps
            # every few thousand steps; frozen, a pass walks only what the runs made since.
            try:
                with cyclic_collection_paused(freeze_after=True):
                    from . import durable

                    runtime = durable.launch(
                        home,
                        self.database or database_url(),
                        self.settings,
                        executes=self.executes,
                        answered=self._answered,
                    )
            except RuntimeError as exc:  # DBOS is one per process, on one store
                raise StorageError(str(exc)) from None
            if self.server:
                runtime.exit_promptly_on_shutdown()
            self.runtime = runtime
        # An answer recorded by a server that ended before sending it reaches its run when a
        # server opens the store again. Only a server: a worker or the CLI that a hand-over
        # starts while the run's answer is in flight found the run's state not yet moved past
        # the answered step, sent the answer again, and the step after it ran twice
        # (tests/cli/test_no_run_left_behind.py, the short wait); the CLI re-sends on a retry.
        in_flight = runtime.runs_in_flight() if self.server else []
        if in_flight:
            deliver_recorded_answers(runtime, self.sessions.store, in_flight)

    @property
    def sessions(self) -> SessionService:
        """Sessions live in the same store (their own tables; no DBOS), and the answers table
        there is what makes an answer to a run's waiting step exactly-once. Made on first use
        (sessions import the navigator: not needed to execute a run)."""
        if self._sessions is None:
            with self._making_sessions:  # run tools called together make one, not one each
                if self._sessions is None:
                    from ..sessions.service import SessionService

                    self._sessions = SessionService(home=self.home, database=self.database)
        return self._sessions

    def _answered(self, run_id: str, step_key: str) -> bool:
        return self.sessions.store.answer(run_id, step_key) is not None

    def work(self, *, linger: float = 2.0) -> None:
        """Be a worker: execute the runs handed over (recovered from dead processes, answered,
        queued) until none is left for ``linger`` seconds, then return (`workrail worker`)."""
        runtime = self._runtime()
        started = time.monotonic()
        postgres = runtime.journal.postgres
        # On Postgres a dead process is claimed two liveness checks after it died: stay for them.
        interval = float(os.environ.get("WORKRAIL_LIVENESS_INTERVAL", "5")) if postgres else 0.0
        quiet_since: float | None = None
        while True:
            runtime.recover_dead_now()
            now = time.monotonic()
            if runtime.busy() or (postgres and runtime.needs_worker()):
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            if (
                quiet_since is not None
                and now - quiet_since >= linger
                and now - started >= 3 * interval + linger
            ):
                return
            time.sleep(0.25)

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

    def plan(self, workflow: dict[str, Any], parameters: Any, options: RunOptions) -> RunResult:
        values = self.prepare(workflow, parameters, options)
        masks = masks_of(workflow)  # as the run would store and use them (see `run`)
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
        timeout = options.timeout or workflow.get("timeoutSeconds")
        # The run's input is stored: a parameter or a context value holding a secret's value is
        # stored (and seen by the steps) masked, as everything else of the run.
        masks = masks_of(workflow)
        return self._start(
            workflow,
            {
                "workflow": workflow,
                "workflow_hash": workflow_hash(workflow),
                "parameters": masks.mask(values),
                "context": masks.mask(options.context),
                "deadline": time.time() + timeout if timeout else None,
                "parallel_limit": options.parallel_limit,
                "started_at": time.time(),
            },
        )

    def _start(self, workflow: dict[str, Any], run: dict[str, Any]) -> str:
        """Start a run of ``workflow`` with the input ``run``, once commands and the sandbox are
        allowed; returns its id."""
        needs = run_needs(workflow)
        if needs.commands and not self.settings.allow_commands:
            raise SecurityViolation(
                "this workflow has command steps, and command execution is off: start the server "
                "with --allow-commands to allow it (dry runs are always allowed)",
                flag="--allow-commands",
                workflowId=workflow.get("id"),
            )
        if needs.sandbox or self.settings.sandbox:
            check_sandbox()
        runtime = self._runtime()
        run_id = f"wf-{uuid.uuid4().hex[:12]}"
        runtime.start_run(run_id, run)
        # What it was started with, kept here: the store holds the same, and the first read of
        # the run (a caller's `wait`) need not load and decode the whole definition again.
        self._inputs.put(run_id, run, prompted=needs.prompts)
        return run_id

    def fork(
        self,
        run_id: str,
        from_step: str,
        parameters: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> str:
        """Start a new run of ``run_id``'s workflow that keeps the results the run recorded before
        ``from_step`` (a step key as in ``step_results``, ``test[2]`` in a loop, or a step id: its
        first result) — no command of those runs again, no agent is asked again — and runs from
        that step on with ``parameters`` changed (merged over the run's, checked against the
        workflow's schema) and ``context`` variables added or changed. Returns the new run's id.

        The run may be a fork itself, and still running. Its timeout (as a duration) and parallel
        limit carry over; secrets are read from the environment as each step starts, as in any
        run. Unknown run: `RunNotFound`; a step the run has no result for (and does not wait on):
        `InvalidParams`, whose ``steps`` lists those it has."""
        if self.sessions.store.get(run_id) is not None:
            raise InvalidParams(
                f"{run_id} is a session: fork a session by continuing from an earlier step's "
                "token; `fork` forks runs",
                details="run_id",
            )
        stored = self._stored(run_id)
        parent = stored.run
        results = self._runtime().step_results(run_id)
        waiting = stored.state.get("waiting") if stored.state["status"] == "waiting" else None
        workflow = stored.workflow
        point = fork_point(results, waiting["step_key"] if waiting else None, from_step, workflow)
        values = self.prepare(workflow, {**stored.parameters, **(parameters or {})}, RunOptions())
        masks = masks_of(workflow)
        kept = results[: point.kept]
        answers = self._kept_answers(run_id, parent, kept)
        deadline, started = parent.get("deadline"), parent.get("started_at") or time.time()
        run = {
            "workflow": workflow,
            "workflow_hash": workflow_hash(workflow),
            "parameters": masks.mask(values),
            "context": parent.get("context") or {},
            "deadline": time.time() + (deadline - started) if deadline else None,
            "parallel_limit": parent.get("parallel_limit"),
            "started_at": time.time(),
            FORKED_FROM: forked_from_input(
                run_id,
                parent,
                point,
                masks.mask(values),
                masks.mask(dict(context or {})),
                answers,
            ),
        }
        return self._start(workflow, run)

    def _kept_answers(
        self, run_id: str, parent: Mapping[str, Any], kept: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """What the agent sent with each kept prompt step's answer (its context changes and
        artifacts: the fork's walk takes them as the parent's did), by step key: the answers
        given to the run, and those it kept itself when it is a fork."""
        keys = {r["step_name"] for r in kept}
        inherited = (parent.get(FORKED_FROM) or {}).get("answers") or {}
        answers = {key: message for key, message in inherited.items() if key in keys}
        for answer in self.sessions.store.answers(run_id):
            message = (answer.response or {}).get(MESSAGE)
            if answer.step_key in keys and isinstance(message, dict):
                answers[answer.step_key] = {
                    k: message[k] for k in ("context", "artifacts") if message.get(k)
                }
        return answers

    # --- reading -------------------------------------------------------------------------

    def get(self, run_id: str) -> RunResult:
        """The run as the spec shapes it (status, workflow_id, steps_completed, step_results, ...);
        a session's too."""
        session = self._session(run_id)
        if session is not None:
            return session
        return self._stored(run_id).state

    def _session(self, run_id: str) -> RunResult | None:
        """The session ``run_id``, if it is one. A run whose input is kept here is not: the store
        is not asked (runs and sessions draw their ids alike, a run's never a session's), so
        that following a run — `wait`, a client polling — reads the runs' tables alone (on
        Postgres the sessions' query was ≈ 1.5 ms of each read)."""
        return None if run_id in self._inputs else self.sessions.get(run_id)

    def _stored(self, run_id: str) -> _StoredRun:
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
        if cached is None:
            cached = self._inputs.put(run_id, run_input(status))
        stored = _snapshot(
            status,
            cached.input,
            cached.steps_total,
            runtime.events(run_id),
            runtime.step_results(run_id),
        )
        forks = runtime.journal.forks_of([run_id]).get(run_id)
        if forks:
            stored.state["forks"] = [{"run_id": f["run_id"], "step": f["step"]} for f in forks]
        if not cached.prompted:
            return stored  # commands only: no answers, confirmations or model calls to read
        snap = stored.state
        answers = {a.step_key: a for a in self.sessions.store.answers(run_id)}
        waiting = snap.get("waiting")
        if waiting and waiting["step_key"] in answers:
            # Answered, not yet acted on: the run is not waiting for the agent any more.
            snap["status"] = "running"
            snap["answered_step"] = snap.pop("waiting")["step_key"]
        self._with_answers(snap, run_id, answers)
        return stored

    def _with_answers(self, snap: RunResult, run_id: str, answers: dict[str, Answer]) -> None:
        """Each prompt step's result with what its answer recorded (a person's confirmation,
        the model's usage), the refusals of the waiting step, the run's model usage."""
        refusals = self.sessions.store.refusals(run_id)
        for result in snap.get("step_results", ()):
            answer = answers.get(result["step_name"])
            if answer is not None and answer.response:
                facts = answer_facts(answer, refusals)
                for key in _ANSWER_FACTS:
                    if facts.get(key) is not None:
                        result[key] = facts[key]
        with_history(snap, self.sessions.store, refusals)

    def workflow_of(self, run_id: str) -> dict[str, Any]:
        """The workflow a run runs (as it was started: its input never changes)."""
        cached = self._inputs.get(run_id)
        workflow: dict[str, Any] = (
            cached.input.get("workflow") or {}
            if cached is not None
            else self._stored(run_id).workflow
        )
        return workflow

    def list(self, *, running_only: bool = False, limit: int = 50) -> list[RunSummary]:
        runtime = self._runtime()
        statuses = runtime.list_runs(running_only=running_only, limit=limit)
        # An in-flight run may be waiting for the agent: its state event says so, as in get().
        summaries = [
            _summary(s, runtime.events(s.workflow_id) if s.status in IN_FLIGHT else {})
            for s in statuses
        ]
        answered = self.sessions.store.answered_keys(
            [run["workflow_id"] for run, waiting_on in summaries if waiting_on]
        )
        forks = runtime.journal.forks_of([run["workflow_id"] for run, _ in summaries])
        runs = []
        for run, waiting_on in summaries:
            if (run["workflow_id"], waiting_on) in answered:
                run["status"] = "running"
            if run["workflow_id"] in forks:
                run["forks"] = [
                    {"run_id": f["run_id"], "step": f["step"]} for f in forks[run["workflow_id"]]
                ]
            runs.append(run)
        runs += self.sessions.list(limit=limit, active_only=running_only)
        runs.sort(key=lambda r: r["started_at"], reverse=True)
        return runs[:limit]

    def wait(
        self,
        run_id: str,
        seconds: float,
        on_change: Callable[[RunResult], None] | None = None,
        leave_waiting: str | None = None,
        stop: threading.Event | None = None,
    ) -> RunResult:
        """The run once it ends or waits for the agent, or as it is when ``seconds`` are up
        (or when ``stop`` is set)."""
        end = time.monotonic() + max(seconds, 0.0)
        session = self._session(run_id)
        if session is not None:  # a session moves only when the agent answers
            if on_change is not None:
                on_change(session)
            return session
        progress = self._runtime().progress
        running = progress.running_mark(run_id) if on_change is None else None
        if running is not None:
            # Executing here, not waiting for the agent: nothing to read before it changes (a read
            # now, ≈ 3 ms of the interpreter's lock, delayed the run's first steps).
            progress.wait_for_change(
                run_id, seconds, steps=False, stop=stop, since=running, here=True
            )
        seen = None
        handed = time.monotonic()
        while True:
            mark_before = progress.change_mark(run_id)
            snap = self.get(run_id)
            if snap.get("answered_step") and time.monotonic() - handed > 2.0:
                # Answered and not acted on yet: the process it was handed to may have ended
                # right then; hand it over again (a no-op while its executor lives).
                handed = time.monotonic()
                self._runtime().hand_over(run_id)
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
            progress.wait_for_change(
                run_id, remaining, steps=on_change is not None, stop=stop, since=mark_before
            )

    def step_events(
        self, run_id: str, cursor: int, seconds: float, stop: threading.Event | None = None
    ) -> StepFeedRead:
        """The run's step events after ``cursor`` (``step_events.StepEvents``), waiting up to
        ``seconds`` for one. A run executing in another process has no feed here: its steps'
        ends are read from the journal (in the order they were recorded; the cursor then counts
        results), looked at every quarter second."""
        runtime = self._runtime()
        read = runtime.steps.read(run_id, cursor, seconds, stop)
        if read is not None:
            return read
        end = time.monotonic() + max(seconds, 0.0)
        while True:
            results = runtime.step_results(run_id)
            left = end - time.monotonic()
            if len(results) > cursor or left <= 0 or (stop is not None and stop.is_set()):
                ended = [
                    {"event": "ended", "step": r["step_name"], "status": r["status"]}
                    for r in results[cursor:]
                ]
                return StepFeedRead(ended, max(cursor, len(results)))
            time.sleep(min(left, 0.25))

    def step_cursor(self, run_id: str) -> int:
        """The cursor of `step_events` after what has happened so far."""
        runtime = self._runtime()
        if runtime.steps.has(run_id):
            return runtime.steps.end(run_id)
        return len(runtime.step_results(run_id))

    # --- acting on a run -----------------------------------------------------------------

    def cancel(self, run_id: str, reason: str | None = None) -> Cancelled:
        if self._session(run_id) is not None:
            return self.sessions.cancel(run_id, reason)
        stored = self._stored(run_id)
        snap = stored.state
        if snap["status"] not in ACTIVE:
            return {
                "status": snap["status"],
                "steps_completed": snap["steps_completed"],
                "message": f"run {run_id} had already finished ({snap['status']}); nothing to cancel",
            }
        masks = masks_of(stored.workflow)
        self._runtime().cancel(run_id, masks.mask(reason or "cancelled"))
        out: Cancelled = {
            "status": "cancelled",
            "steps_completed": self.get(run_id)["steps_completed"],
        }
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
        step_key: str | None = None,
        confirm: Confirm | None = None,
        model_usage: Mapping[str, Any] | None = None,
        stop: threading.Event | None = None,
    ) -> RunResult:
        """Answer the step a run (or a session) waits on, exactly once, then follow the run for
        up to ``wait_seconds`` (until ``stop`` is set) to its next wait or end, as `wait` does.

        ``step_key`` names the step attempt answered (``waiting.step_key``). The same answer
        again returns the run's state with ``outcome: replayed``; another answer to a step
        already answered raises `AnswerNotApplied`; an answer that fails the step's checks
        returns ``outcome: blocked`` and the run stays at the step. Without ``step_key`` the
        answer is for the step waiting now, and one identical to the last applied answer counts
        as its replay.

        ``confirm``: how to ask a person to confirm a step whose confirmation is a person's,
        once the answer has passed its checks (a refusal keeps the step waiting, ``outcome:
        blocked``, and is recorded); ``model_usage``: the answer is the client's model's, and
        this is the run's usage so far (kept with the answer). A replay is followed like the
        answer it repeats: a retry after a lost reply gets the state that reply would have had."""
        if self.sessions.store.get(run_id) is not None:
            return self._continue_session(
                run_id, output, context, artifacts, step_key, confirm, model_usage
            )
        stored = self._stored(run_id)
        snap = stored.state
        masks = masks_of(stored.workflow)
        given = masked_answer(masks, output, artifacts, context)
        digest = given.digest
        waiting = snap.get("waiting") if snap["status"] == "waiting" else None
        key = step_key or (waiting["step_key"] if waiting else snap.get("answered_step"))
        replay = self._earlier_answer(run_id, snap, key, digest, explicit=step_key is not None)
        if replay is not None:
            return self._replayed(run_id, replay, key, wait_seconds, stop)
        if waiting is None or waiting["step_key"] != key:
            answers = self.sessions.store.answers(run_id)
            raise InvalidRunState(
                f"answer not applied: run {run_id} is {snap['status']}, not waiting for an answer "
                "to "
                + (f"step {key!r}" if key else "any step")
                + (f"; it waits on step {waiting['step_key']!r}" if waiting else "")
                + (
                    f" (the last step answered, {answers[-1].step_key!r}, got another answer)"
                    if answers and not waiting
                    else ""
                ),
                runId=run_id,
                status=snap["status"],
                state=snap,
            )
        step = find_step(stored.workflow, waiting["step"]["id"])
        values = {
            "parameters": stored.parameters,
            "context": {**waiting.get("context", {}), **given.context},
            "steps": {},
        }
        verdict = judge(
            self.sessions.store,
            run_id,
            key,
            given,
            definition=stored.workflow,
            step=step,
            shown={**step, "title": waiting["step"].get("title") or step.get("title")},
            guidance=waiting.get("guidance") or {},
            context=condition_context(values),
            require_notes=False,
            confirm=confirm,
            masks=masks,
        )
        confirmation = verdict.confirmation
        if verdict.blocked is not None:
            state = self.get(run_id) if confirmation is not None else snap
            blocked: RunResult = {**state, "outcome": "blocked", **_blocked_fields(verdict.blocked)}
            if confirmation is not None:
                blocked["confirmation"] = confirmation
            masked: RunResult = masks.mask(blocked)
            return masked
        message: dict[str, Any] = {
            "step_key": key,
            "output": given.output,
            "context": given.context,
            "artifacts": given.artifacts,
        }
        if not given.artifacts:
            message.pop("artifacts")
        # DBOS stores the message (and the run's receipt of it): masked before it is sent. It is
        # kept with the answer too, to be sent again (answer_delivery).
        response = {
            "confirmation": confirmation,
            "model_usage": masks.mask(model_usage),
            MESSAGE: message,
        }
        before = waiting.get("context", {})
        record = Answer(
            key,
            digest,
            step["id"],
            None,
            None,
            {k: v for k, v in response.items() if v is not None},
            time.time(),
            workflow_hash=workflow_hash(stored.workflow),
            context_before=before,
            given=given.recorded(),
            context_after={**before, **given.context},
        )
        claim = self.sessions.store.claim(run_id, record)
        if not claim.applied:
            # Another answer to this step was recorded first: replayed, or refused.
            earlier = self._earlier_answer(
                run_id, self._stored(run_id).state, key, digest, explicit=True
            )
            if earlier is None:
                raise StorageError(f"the answer to step {key!r} of run {run_id} was lost")
            return self._replayed(run_id, earlier, key, wait_seconds, stop)
        crash_point()
        deliver(self._runtime(), run_id, message)
        return self._followed(run_id, "accepted", key, None, wait_seconds, stop)

    def _replayed(
        self,
        run_id: str,
        earlier: RunResult,
        key: str | None,
        seconds: float,
        stop: threading.Event | None,
    ) -> RunResult:
        """A resent answer follows the run as the answer it repeats (a recorded answer names
        its step)."""
        step = str(earlier.get("answered_step") or key)
        return self._followed(
            run_id, earlier.get("outcome"), step, earlier.get("message"), seconds, stop
        )

    def _followed(
        self,
        run_id: str,
        outcome: Any,
        answered_step: str,
        message: Any,
        seconds: float,
        stop: threading.Event | None,
    ) -> RunResult:
        """The run's state after an answer to ``answered_step`` (its ``outcome``, the ``message``
        a replay carries), once the run has left that step and ended or waits again, or
        ``seconds`` are up."""
        after = self.wait(run_id, seconds, leave_waiting=answered_step, stop=stop)
        if outcome is not None:
            after["outcome"] = outcome
        after["answered_step"] = answered_step
        if message is not None:
            after["message"] = message
        return after

    def _earlier_answer(
        self, run_id: str, snap: RunResult, key: str | None, digest: str, *, explicit: bool
    ) -> RunResult | None:
        """The run's state as a replay when this very answer was applied before; `AnswerNotApplied`
        when another answer to that step was; None when the step has no answer yet."""
        store = self.sessions.store
        recorded = earlier_answer(store, run_id, key, digest, resent_last=not explicit)
        if recorded is None:
            return None
        if recorded.digest == digest:
            if snap.get("answered_step") == recorded.step_key:
                # Recorded and not acted on: the process that recorded it may have ended before
                # sending it. Sent again; the run acts on one of the two.
                deliver_again(self._runtime(), store, run_id, recorded.step_key)
            replayed: RunResult = {
                **snap,
                "outcome": "replayed",
                "answered_step": recorded.step_key,
            }
            waiting = snap.get("waiting") if snap.get("status") == "waiting" else None
            if waiting and waiting["step_key"] != recorded.step_key:
                replayed["message"] = (
                    f"this answer was applied to step {recorded.step_key!r} before; nothing was "
                    f"applied now. The run waits on step {waiting['step_key']!r}: to answer it "
                    f"with the same text, pass step_key {waiting['step_key']!r}"
                )
            return replayed
        raise AnswerNotApplied(
            f"answer not applied: step {recorded.step_key!r} of run {run_id} was already answered "
            "with another answer, which was applied; the run is now " + _state_words(snap),
            runId=run_id,
            reason="ANSWER_NOT_APPLIED",
            state=snap,
        )

    def _continue_session(
        self,
        run_id: str,
        output: str,
        context: dict[str, Any] | None,
        artifacts: Sequence[Any] | None,
        step_key: str | None,
        confirm: Confirm | None,
        model_usage: Mapping[str, Any] | None,
    ) -> RunResult:
        attempt = int(step_key) if step_key and step_key.isdigit() else None
        if step_key is not None and attempt is None:
            raise InvalidParams(
                f"step_key {step_key!r}: a session's step attempts are numbers (waiting.step_key)",
                details="step_key",
            )
        step = self.sessions.answer(
            run_id,
            attempt,
            notes=output,
            artifacts=artifacts,
            context=context,
            confirm=confirm,
            model_usage=model_usage,
        )
        state = self.sessions.get(run_id)
        if state is None:  # the answer was taken: the session is there
            raise StorageError(f"session {run_id} is gone")
        return session_result(state, step)


@dataclass(frozen=True)
class _RunInput:
    input: dict[str, Any]  # what the run was started with: workflow, parameters, ...
    prompted: bool  # whether its workflow has prompt steps (answers to read with its results)

    @functools.cached_property
    def steps_total(self) -> int:
        """Its workflow's steps that do work: counted once, not at every read of the run (a
        client following a run reads it every tenth of a second)."""
        return len(executable_steps(self.input.get("workflow") or {}))


# What a step's result shows of its answer (`answer_facts`), when there is something to show.
_ANSWER_FACTS: tuple[Literal["confirmation", "model_usage", "confirmations"], ...] = (
    "confirmation",
    "model_usage",
    "confirmations",
)


class _RunInputs:
    """The inputs of the runs read last. A run's input never changes, so a client following a
    run has it read from the store once; at most ``size`` runs are kept, the least recently read
    forgotten first, so that a long-lived server asked about many runs does not keep every
    workflow it was ever asked about (one may be megabytes)."""

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._runs: OrderedDict[str, _RunInput] = OrderedDict()
        self._lock = threading.Lock()  # tool calls read runs from several threads

    def get(self, run_id: str) -> _RunInput | None:
        with self._lock:
            found = self._runs.get(run_id)
            if found is not None:
                self._runs.move_to_end(run_id)
            return found

    def put(self, run_id: str, run: dict[str, Any], prompted: bool | None = None) -> _RunInput:
        """``prompted``: whether its workflow has prompt steps, when already known."""
        if prompted is None:
            prompted = has_prompts(run.get("workflow") or {})
        entry = _RunInput(run, prompted)
        with self._lock:
            self._runs[run_id] = entry
            self._runs.move_to_end(run_id)
            while len(self._runs) > self._size:
                self._runs.popitem(last=False)
        return entry

    def __len__(self) -> int:
        return len(self._runs)

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._runs


def session_result(snap: RunResult, step: SessionStep) -> RunResult:
    """A session's answer as the run tools return it: the run-shaped state plus the outcome,
    the problems of a blocked answer and the session's tokens."""
    out: RunResult = {
        **snap,
        "outcome": {"advanced": "accepted"}.get(step.outcome, step.outcome),
        "continue_token": step.continue_token,
        "checkpoint_token": step.checkpoint_token,
    }
    if step.outcome == "blocked":
        out = {**out, **_blocked_fields(step)}
        out["retry"] = step.retry  # None too: a session's blocked answer always says
    if step.confirmation is not None:
        out["confirmation"] = step.confirmation
    return out


def _blocked_fields(blocked: Blocked | SessionStep) -> BlockedFields:
    """What a blocked answer (a run's verdict, a session's step) adds to the state (the fields
    it has)."""
    fields: BlockedFields = {
        "problems": blocked.problems,
        "issues": blocked.issues,
        "suggestions": blocked.suggestions,
        "blockers": blocked.blockers,
    }
    if blocked.validation is not None:
        fields["validation"] = blocked.validation
    if blocked.assessment_followup is not None:
        fields["assessment_followup"] = blocked.assessment_followup
    if blocked.retry is not None:
        fields["retry"] = blocked.retry
    return fields


def _state_words(snap: RunResult) -> str:
    if snap.get("status") == "waiting" and snap.get("waiting"):
        return f"waiting on step {snap['waiting']['step_key']!r}"
    return str(snap.get("status"))


def _elapsed(run: dict[str, Any], state: dict[str, Any], status: Any) -> float:
    started = run.get("started_at") or (status.created_at or 0) / 1000
    return max((state.get("finished_at") or time.time()) - started, 0.0)


def _status_of(status: Any, state: dict[str, Any]) -> str:
    """The run's status from DBOS's and what the run reported last: its state event, or (when
    the events were not read) the summary it ended with."""
    output = status.output if isinstance(status.output, dict) else {}
    return run_status(status.status, state.get("status", output.get("status")))


@dataclass(frozen=True)
class _StoredRun:
    """A run as read from the store: its state as returned, and what it was started with."""

    state: RunResult
    workflow: dict[str, Any]
    parameters: dict[str, Any]
    run: dict[str, Any]  # its whole input


def _snapshot(
    status: Any,
    run: dict[str, Any],
    steps_total: int,
    events: dict[str, Any],
    results: list[dict[str, Any]],
) -> _StoredRun:
    workflow = run.get("workflow") or {}
    state = events.get("state") or {}
    kind = _status_of(status, state)
    error = state.get("error_message")
    if status.status in FAILED:
        error = str(status.error) if status.error else "the run failed"
    elif kind == "cancelled":
        error = "cancelled: " + str(
            (status.attributes or {}).get("cancel_reason") or "no reason given"
        )
    snap = run_result(
        status.workflow_id,
        kind,
        results,
        steps_total,
        _elapsed(run, state, status),
        error if kind not in ("success",) + ACTIVE else None,
        workflow_name=workflow.get("id"),
    )
    if kind == "waiting" and state.get("waiting"):
        snap["waiting"] = state["waiting"]
    lineage = run.get(FORKED_FROM)
    if lineage:
        snap["forked_from"] = {"run_id": lineage["run_id"], "step": lineage["step"]}
    return _StoredRun(snap, workflow, run.get("parameters") or {}, run)


def _summary(status: Any, events: dict[str, Any]) -> tuple[RunSummary, str | None]:
    """The run in the list, and the step it waits on (None: it waits on none)."""
    run = run_input(status)
    state = events.get("state") or {}
    kind = _status_of(status, state)
    summary: RunSummary = {
        "workflow_id": status.workflow_id,
        "workflow_name": (run.get("workflow") or {}).get("id"),
        "status": kind,
        "started_at": (status.created_at or 0) / 1000,
    }
    lineage = run.get(FORKED_FROM)
    if lineage:
        summary["forked_from"] = {"run_id": lineage["run_id"], "step": lineage["step"]}
    waiting_on = (
        state["waiting"].get("step_key") if kind == "waiting" and state.get("waiting") else None
    )
    return summary, waiting_on
