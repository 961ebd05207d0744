"""The run tools: run_workflow, fork_workflow, get_workflow_run, cancel_workflow, continue_workflow.

They are tools like the others (one registry: strict arguments, callable as direct methods and
through ``tools/call`` with the same codes). Error policy, as for the other tools: an anticipated
failure (`EngineError`) carries its spec code (−32007 for command steps without
``--allow-commands``, −32602 for parameters that fail the workflow's schema, −32008 for an
unknown run id, explained when the id is a workflow's).

Nothing here imports DBOS: the `RunService` launches it on the first call that needs the store,
or — when a store already exists — in a thread right after the client's ``initialized``
notification, to recover runs that a killed process left behind. ``initialize`` is never slowed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.errors import EngineError, InvalidParams
from workrail_engine.result_shapes import Cancelled, RunResult, RunSummary, StepResult
from workrail_engine.runs.resolve import (
    project_of,
    resolve_workflow,
    run_ids_explained,
    store_exists,
)
from workrail_mcp.next_action import phrase_run, run_retry_call, with_retry_call
from workrail_mcp.tools._shapes import AnyJson, ArtifactsArg
from workrail_mcp.tools.binding import ToolEnv, ToolSpec, read_only, writes

if TYPE_CHECKING:  # the run service (planner, walker, executor) and the sessions engine load on
    # first use: the server's start and workflow_next need neither (the cold-start goal, docs/benchmarks.md)
    from workrail_engine.answers.confirmation import Confirm
    from workrail_engine.answers.model_loop import AskModel
    from workrail_engine.catalog import CatalogProtocol
    from workrail_engine.runs import RunService

__all__ = ["SPECS", "RunsState", "RecoveryKick"]

log = logging.getLogger(__name__)


class RunsState:
    """The server's `RunService`, made on first need (the first run tool call, or recovery)."""

    def __init__(
        self,
        catalog: CatalogProtocol,
        allow_commands: bool,
        sandbox: bool = False,
        service: RunService | None = None,
    ) -> None:
        # ``service``: the process's RunService when the dashboard shares it (DBOS is one per
        # process, so the service is too).
        self.catalog = catalog
        self._allow_commands, self._sandbox = allow_commands, sandbox
        self._service = service
        self._making = threading.Lock()
        self._recovery = threading.Lock()

    @property
    def service(self) -> RunService:
        if self._service is None:
            with self._making:
                if self._service is None:
                    from workrail_engine.runs import RunService

                    self._service = RunService(
                        project_of(self.catalog),
                        server=True,
                        allow_commands=self._allow_commands,
                        sandbox=self._sandbox,
                    )
        return self._service

    @property
    def started(self) -> bool:
        """Whether the run store is open (False without making the service)."""
        return self._service is not None and self._service.started

    def recover_soon(self) -> None:
        """Start the store in the background when it already holds runs (they may need recovery)."""
        if self.started or not self._recovery.acquire(blocking=False):
            return
        if store_exists():
            threading.Thread(
                target=self._start_quietly, name="workrail-recovery", daemon=True
            ).start()

    def _start_quietly(self) -> None:
        try:
            self.service.start()
        except EngineError as error:
            log.warning("could not open the run store for recovery: %s", error.message)
        except Exception as error:  # one line on stderr: the server goes on without recovery
            log.warning("could not open the run store for recovery: %s", error)

    def running(self) -> list[RunSummary]:
        """The runs in progress, for list_workflows; without a store there are none (and none is
        created just to count them)."""
        if not self.started and not store_exists():
            return []
        try:
            return self.service.list(running_only=True)
        except EngineError as error:
            log.warning("cannot read the run store: %s", error.message)
            return []


class RecoveryKick:
    """Middleware: once the client is initialized, recover interrupted runs in the background."""

    def __init__(self, runs: RunsState) -> None:
        self.runs = runs

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method != "initialize" and not self.runs.started:
            self.runs.recover_soon()
        return result


def _runs(env: ToolEnv) -> RunsState:
    if env.runs is None:  # a server always has them; a bare ToolEnv (tests of other tools) not
        raise EngineError("runs are not available in this server")
    runs: RunsState = env.runs
    return runs


def _explaining_run_ids(env: ToolEnv) -> AbstractContextManager[None]:
    """A workflow id given where a run id belongs is said to be one, with the tool to call."""
    return run_ids_explained(env.catalog, lambda _: "call run_workflow to start one")


RunId = Annotated[
    str,
    Field(
        description='The run\'s id, as returned by run_workflow ("wf-..."); not a workflow id.',
        min_length=1,
        max_length=200,
    ),
]
WaitSeconds = Annotated[
    float,
    Field(
        description="How long to wait for the run to finish or to need the agent "
        "before returning its current state (the run goes on).",
        ge=0,
        le=600,
    ),
]


Progress = Callable[[float, float | None, str | None], None]


def _on_change(report: Progress | None) -> Callable[[RunResult], None] | None:
    if report is None:
        return None

    def changed(snap: RunResult) -> None:
        message = f"{snap['status']}: {snap['steps_completed']}/{snap['steps_total']} steps"
        if snap.get("step_results"):
            last = snap["step_results"][-1]
            message += f" (last: {last['step_name']} {last['status']})"
        report(snap["steps_completed"], snap["steps_total"], message)

    return changed


def run_workflow(
    env: ToolEnv,
    workflow_name: Annotated[
        str,
        Field(
            description="The workflow's id (as listed by list_workflows) or the path "
            "of a workflow file inside the workflow directories."
        ),
    ],
    parameters: Annotated[
        dict[str, Any] | None,
        Field(
            description="Values for the workflow's parameters "
            "(checked against its parameters schema)."
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        Field(
            description="Only validate and return the plan (steps, order, parallel "
            "groups, rendered argv); nothing is executed."
        ),
    ] = False,
    timeout: Annotated[
        int | None, Field(description="Overall timeout of the run in seconds.", ge=1)
    ] = None,
    parallel_limit: Annotated[
        int | None, Field(description="Most steps running at once in the whole run.", ge=1)
    ] = None,
    wait_seconds: WaitSeconds = 30,
    context: Annotated[
        dict[str, Any] | None, Field(description="Initial context variables.")
    ] = None,
    *,
    report: Progress | None = None,
    confirm: Confirm | None = None,
    sample: AskModel | None = None,
) -> RunResult:
    from workrail_engine.runs import RunOptions

    service = _runs(env).service
    workflow, _ = resolve_workflow(env.catalog, workflow_name, any_path=False, base=service.project)
    options = RunOptions(timeout=timeout, parallel_limit=parallel_limit, context=context or {})
    if dry_run:
        return service.plan(workflow, parameters, options)
    run_id = service.run(workflow, parameters, options)
    state = service.wait(run_id, wait_seconds, on_change=_on_change(report))
    return phrase_run(_with_model(env, state, sample, confirm, wait_seconds))


def fork_workflow(
    env: ToolEnv,
    workflow_id: RunId,
    from_step: Annotated[
        str,
        Field(
            description="The step to run again from: a step key as in step_results "
            '("test[2]" in a loop), a step id (its first result), or a parallel group\'s or '
            "loop's id (the first of its steps that ran, so all of it runs again).",
            min_length=1,
            max_length=200,
        ),
    ],
    parameters: Annotated[
        dict[str, Any] | None,
        Field(
            description="Parameters to change from that step on (merged over the run's, "
            "checked against the workflow's parameters schema)."
        ),
    ] = None,
    context: Annotated[
        dict[str, Any] | None,
        Field(description="Context variables to add or change from that step on."),
    ] = None,
    wait_seconds: WaitSeconds = 30,
    *,
    report: Progress | None = None,
) -> RunResult:
    service = _runs(env).service
    with _explaining_run_ids(env):
        fork_id = service.fork(workflow_id, from_step, parameters, context)
    return phrase_run(service.wait(fork_id, wait_seconds, on_change=_on_change(report)))


def _with_model(
    env: ToolEnv,
    state: RunResult,
    sample: AskModel | None,
    confirm: Confirm | None,
    wait_seconds: float,
) -> RunResult:
    """The run after the client's model answered the prompt steps it may (--sampling), with
    ``sampling: {calls, tokens, stopped}``; ``state`` itself otherwise."""
    if sample is None or env.model_limits is None or state.get("status") != "waiting":
        return state
    from workrail_engine.runs.model_answers import answer_run_with_model

    moved, usage = answer_run_with_model(
        _runs(env).service,
        state,
        sample,
        env.model_limits,
        confirm=confirm,
        wait_seconds=wait_seconds,
    )
    # The outcome stays that of the caller's own answer (none for run_workflow), not the model's.
    out: RunResult = {**moved}
    for key in _ANSWER_KEYS:
        out.pop(key, None)
    for key in _ANSWER_KEYS:
        if key in state:
            out[key] = state[key]
    out["sampling"] = usage.to_dict()
    return out


_ANSWER_KEYS: tuple[Literal["outcome", "answered_step", "message"], ...] = (
    "outcome",
    "answered_step",
    "message",
)


def get_workflow_run(
    env: ToolEnv,
    workflow_id: RunId,
    wait_seconds: Annotated[
        float,
        Field(
            description="Wait up to this long for the run to finish or to need the agent.",
            ge=0,
            le=600,
        ),
    ] = 0,
) -> RunResult:
    with _explaining_run_ids(env):
        return phrase_run(_runs(env).service.wait(workflow_id, wait_seconds))


def cancel_workflow(
    env: ToolEnv,
    workflow_id: RunId,
    reason: Annotated[
        str | None, Field(description="Why the run is cancelled (recorded with it).")
    ] = None,
) -> Cancelled:
    with _explaining_run_ids(env):
        return _runs(env).service.cancel(workflow_id, reason)


class ContinueResult(TypedDict, total=False):
    """A run's state after an answer (RunResult's fields), or a session's position (the
    session tools' fields) when a continueToken was passed."""

    status: str
    workflow_id: str
    workflow_name: str | None
    steps_completed: int
    steps_total: int
    step_results: list[StepResult]
    execution_time: float
    error_message: str | None
    waiting: dict[str, Any]
    outcome: str
    issues: list[str]
    suggestions: list[str]
    follow_ups: list[str]
    answered_step: str
    message: str
    continue_token: str
    checkpoint_token: str
    kind: str
    continueToken: str
    checkpointToken: str
    isComplete: bool
    pending: dict[str, Any] | None
    confirmation: dict[str, Any] | None
    sampling: dict[str, Any]
    preferences: dict[str, str]
    nextIntent: str
    nextCall: dict[str, Any] | None
    runId: str
    blockers: dict[str, Any]
    retryable: bool
    retryContinueToken: str
    forkOf: dict[str, Any]
    forkedFrom: dict[str, Any]


class SessionOutput(TypedDict, total=False):
    notesMarkdown: str
    artifacts: list[AnyJson]


def continue_workflow(
    env: ToolEnv,
    workflow_id: Annotated[
        str | None,
        Field(
            description="The run's (or session's) id, \"wf-...\"; or pass continueToken instead.",
            min_length=1,
            max_length=200,
        ),
    ] = None,
    output: Annotated[
        str | SessionOutput | None,
        Field(
            description="What you produced for the step: text, or {notesMarkdown, artifacts} "
            "(a session's notes: what you did, found and decided)."
        ),
    ] = None,
    context: Annotated[
        dict[str, Any] | None, Field(description="Context variables to add or change.")
    ] = None,
    wait_seconds: WaitSeconds = 30,
    artifacts: ArtifactsArg = None,
    step_key: Annotated[
        str | None,
        Field(
            description="The step attempt you answer (waiting.step_key): an answer for a step "
            "the run has left is then refused rather than applied to the next one.",
            max_length=200,
        ),
    ] = None,
    continueToken: Annotated[
        str | None,
        Field(
            description="A session's token (ct_... to advance or re-read, st_... to re-read), "
            "exactly as returned.",
            max_length=200,
        ),
    ] = None,
    intent: Annotated[
        Literal["advance", "rehydrate"] | None,
        Field(
            description="With continueToken: advance (the default when output is given) or "
            "rehydrate (show the step the token names again; no output)."
        ),
    ] = None,
    workspacePath: Annotated[
        str | None,
        Field(
            description="Your workspace: a re-read by a resume token (st_...) needs the "
            "workspace the session was started in."
        ),
    ] = None,
    confirm: Confirm | None = None,
    sample: AskModel | None = None,
) -> ContinueResult:
    notes, handed = _answer_parts(output, artifacts)
    if continueToken is not None:
        from workrail_mcp.tools.sessions import (
            caller_workspace,
            session_response,
            sessions_of,
            with_model,
        )

        step = sessions_of(env).continue_session(
            continueToken,
            notes=notes,
            artifacts=handed,
            context=context,
            intent=intent,
            confirm=confirm,
            workspace=caller_workspace(workspacePath),
        )
        return _as_continue_result(session_response(with_model(env, step, sample, confirm)))
    if workflow_id is None or notes is None:
        missing = "workflow_id" if workflow_id is None else "output"
        raise InvalidParams(
            f"{missing} is required: pass workflow_id and output (a run), or continueToken "
            "(a session)",
            details=f"{missing} is required",
        )
    with _explaining_run_ids(env):
        result = _runs(env).service.continue_run(
            workflow_id, notes, context, wait_seconds, handed, step_key=step_key, confirm=confirm
        )
    if result.get("outcome") == "accepted":  # not for a replay, nor an answer sent back
        result = _with_model(env, result, sample, confirm, wait_seconds)
    phrased = phrase_run(result)
    if phrased.get("outcome") == "blocked":
        return _as_continue_result(_phrase_blocked(phrased))
    return _as_continue_result(phrased)


def _as_continue_result(result: Mapping[str, Any]) -> ContinueResult:
    """continue_workflow answers with one of two shapes, declared together as `ContinueResult`
    (every key optional, so that its schema holds both): a run's state, its blockers in upstream's
    form, or a session's position. A TypedDict of the one shape is not one of the union to mypy,
    so it is said to be one here, once."""
    return cast(ContinueResult, result)


def _phrase_blocked(result: RunResult) -> dict[str, Any]:
    """A blocked answer with the blockers' exact retry (continue_workflow with the answer that
    passes), and the assessments' follow-ups by themselves (they are among the issues)."""
    out: dict[str, Any] = {**result}
    follow_ups = [p["message"] for p in out.get("problems", ()) if p["kind"] == "followup"]
    if follow_ups:
        out["follow_ups"] = follow_ups
    waiting = out.get("waiting") or {}
    step_key = waiting.get("step_key") or out.get("session", {}).get("step_attempt")
    call = run_retry_call(out["workflow_id"], step_key, out.pop("retry", None))
    out["blockers"] = with_retry_call(out.get("blockers") or [], call)
    return out


def _answer_parts(output: Any, artifacts: list[Any] | None) -> tuple[str | None, list[Any] | None]:
    """The text and artifacts of an answer, whichever shape it came in."""
    if isinstance(output, dict):
        return output.get("notesMarkdown"), artifacts or output.get("artifacts")
    return output, artifacts


SPECS = [
    ToolSpec(
        run_workflow,
        name="run_workflow",
        title="Run a workflow",
        annotations=writes("Run a workflow", destructive=True, idempotent=False),
        reports_progress=True,
        asks_person=True,
        samples=True,
        description=(
            "Start a server-side run of a workflow: the server keeps its state (steps done, "
            "context, loops), runs its command steps itself (sequential, parallel, conditional, "
            "with retries and timeouts) and pauses at each prompt step for you. Use it when the "
            "workflow has command steps or parameters, or when the state should outlive this "
            "conversation; to simply follow a workflow's prompts step by step, use workflow_next "
            "instead. Pass {workflow_name, parameters?, dry_run?, timeout?, parallel_limit?, "
            "wait_seconds?, context?}. Waits up to wait_seconds, then returns {status, "
            "workflow_id (the run id, wf-...), steps_completed, steps_total, step_results, "
            "execution_time, error_message}; status is success, failed, partial, running, waiting "
            "(a prompt step needs you: see waiting.step and waiting.guidance, then answer with "
            "continue_workflow) or cancelled. Command steps need a server started with "
            "--allow-commands (else error -32007); dry_run is always allowed. Parameters failing "
            "the workflow's schema: -32602 with details."
        ),
    ),
    ToolSpec(
        fork_workflow,
        name="fork_workflow",
        title="Fork a run",
        annotations=writes("Fork a run", destructive=True, idempotent=False),
        reports_progress=True,
        description=(
            "Run a run again from one of its steps: a new run keeps the results of every step "
            "that ended before that step (no command runs again, you are not asked again) and "
            "runs from it on with the parameters and context changed as given. Pass {workflow_id "
            "(the run id, wf-...), from_step (a step id, a step key of step_results, "
            "e.g. test[2], or a group's or loop's id: from the first of its steps that ran; "
            "forked_from.step says which), parameters?, context?, wait_seconds?}. Returns the new run's state "
            "as run_workflow does, with forked_from {run_id, step}; get_workflow_run of a run "
            "lists its forks. Command steps need a server started with --allow-commands (else "
            "error -32007). Unknown run: -32008; a step the run has not reached: -32602 with "
            "data.steps, the steps to choose from."
        ),
    ),
    ToolSpec(
        get_workflow_run,
        name="get_workflow_run",
        title="Get a run",
        annotations=read_only("Get a run"),
        description=(
            "The state of a run started by run_workflow: {status, workflow_id, steps_completed, "
            "steps_total, step_results, execution_time, error_message, waiting?}. Pass "
            "{workflow_id (the run id, wf-...), wait_seconds?}. Unknown id: -32008."
        ),
    ),
    ToolSpec(
        cancel_workflow,
        name="cancel_workflow",
        title="Cancel a run",
        annotations=writes("Cancel a run", destructive=True, idempotent=True),
        description=(
            "Cancel a run started by run_workflow: its processes are stopped within seconds. "
            "Pass {workflow_id (the run id, wf-...), reason?}. Returns {status: cancelled, "
            "steps_completed}; a run already finished is reported as it ended. Unknown id: -32008."
        ),
    ),
    ToolSpec(
        continue_workflow,
        name="continue_workflow",
        title="Continue a waiting run",
        asks_person=True,
        samples=True,
        annotations=writes("Continue a waiting run", destructive=False, idempotent=False),
        description=(
            "Submit your output for the step a run or session waits on. Pass {workflow_id "
            "(the run id, wf-...), output, step_key? (waiting.step_key), context?, "
            "wait_seconds?, artifacts?} — or, for a session, {continueToken, output: "
            "{notesMarkdown, artifacts?}, context?, intent?}. Each answer is applied once: the "
            "same answer again returns the recorded result (outcome: replayed); an answer to a "
            "step already answered otherwise is refused (-32005, data.state). The output is "
            "checked against the step's validation criteria, and artifacts against its output "
            "contract and assessments (waiting.guidance names what is required; a loop's "
            'continue/stop decision is {"kind": "wr.loop_control", "decision": ...}): when a check '
            "fails, the run stays at the step and the result has outcome: blocked with issues and "
            "suggestions (fix and call again); when it passes, the run goes on and the result "
            "(outcome: accepted) is its new state. A session's earlier continueToken re-read "
            "(intent: rehydrate) shows that earlier step (forkOf says so) with a continueToken "
            "that branches the session there: advancing it makes a new session (forkedFrom), "
            "which you continue; the old one stays as it is."
        ),
    ),
]
