"""The run tools: run_workflow, cancel_workflow, continue_workflow, get_workflow_run.

`register(server, catalog, allow_commands=...)` is called by `create_server`; it adds the tools
and returns the provider `list_workflows` calls for its ``running_count`` (the running runs).

Error policy, as for the other tools: an anticipated failure (`EngineError`) comes back as an
``isError`` result carrying its spec code (−32007 for command steps without ``--allow-commands``,
−32602 for parameters that fail the workflow's schema, −32008 for an unknown run id).

Nothing here imports DBOS: the `RunService` launches it on the first call that needs the store,
or — when a store already exists — in a thread right after the client's ``initialized``
notification, to recover runs that a killed process left behind. ``initialize`` is never slowed.
"""

from __future__ import annotations

import logging
import threading
from functools import partial
from typing import Annotated, Any, NotRequired

import anyio.from_thread
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.errors import EngineError
from workrail_engine.runs import RunOptions, RunService, resolve_workflow
from workrail_engine.runs.resolve import project_of, store_exists
from workrail_mcp.error_mapping import error_result, success_result
from workrail_mcp.tools._binding import read_only, writes
from workrail_mcp.tools._shapes import ArtifactsArg

__all__ = ["register"]

log = logging.getLogger(__name__)

RunId = Annotated[
    str,
    Field(
        description='The run\'s id, as returned by run_workflow ("wf-...").',
        min_length=3,
        max_length=64,
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


class StepResult(TypedDict):
    step_name: str
    status: str
    output: Any
    duration: float


class RunResult(TypedDict):
    status: str
    workflow_id: NotRequired[str]
    steps_completed: NotRequired[int]
    steps_total: NotRequired[int]
    step_results: NotRequired[list[StepResult]]
    execution_time: NotRequired[float]
    error_message: NotRequired[str | None]
    waiting: NotRequired[dict[str, Any]]
    outcome: NotRequired[str]
    issues: NotRequired[list[str]]
    suggestions: NotRequired[list[str]]
    follow_ups: NotRequired[list[str]]
    groups: NotRequired[list[dict[str, Any]]]
    dry_run: NotRequired[bool]


class Cancelled(TypedDict):
    status: str
    steps_completed: int
    reason: NotRequired[str]
    message: NotRequired[str]


class _Runs:
    def __init__(self, catalog: Any, allow_commands: bool, sandbox: bool) -> None:
        self.catalog = catalog
        self.service = RunService(
            project_of(catalog), allow_commands=allow_commands, sandbox=sandbox, server=True
        )
        self._recovery = threading.Lock()

    def recover_soon(self) -> None:
        """Start the store in the background when it already holds runs (they may need recovery)."""
        if self.service.started or not self._recovery.acquire(blocking=False):
            return
        if store_exists():
            threading.Thread(
                target=self._start_quietly, name="workrail-recovery", daemon=True
            ).start()

    def _start_quietly(self) -> None:
        try:
            self.service.start()
        except Exception:
            log.exception("could not open the run store for recovery")

    def running(self) -> list[dict[str, Any]]:
        """The runs in progress, for list_workflows; without a store there are none (and none is
        created just to count them)."""
        if not self.service.started and not store_exists():
            return []
        try:
            return self.service.list(running_only=True)
        except EngineError:
            log.exception("cannot read the run store")
            return []


async def _call(fn: Any, *args: Any, **kwargs: Any) -> CallToolResult:
    try:
        return success_result(await anyio.to_thread.run_sync(partial(fn, *args, **kwargs)))
    except EngineError as error:
        return error_result(error.code, error.message, error.data or None)


def _progress(ctx: Context | None) -> Any:
    if ctx is None:
        return None

    def report(snap: dict[str, Any]) -> None:
        message = f"{snap['status']}: {snap['steps_completed']}/{snap['steps_total']} steps"
        if snap.get("step_results"):
            last = snap["step_results"][-1]
            message += f" (last: {last['step_name']} {last['status']})"
        anyio.from_thread.run(
            partial(ctx.report_progress, snap["steps_completed"], snap["steps_total"], message)
        )

    return report


def _tools(runs: _Runs) -> list[tuple[Any, dict[str, Any]]]:
    service = runs.service

    def start_and_wait(
        name: str,
        parameters: dict | None,
        dry_run: bool,
        timeout: float | None,
        parallel_limit: int | None,
        wait_seconds: float,
        context: dict | None,
        report: Any,
    ) -> dict[str, Any]:
        workflow, _ = resolve_workflow(runs.catalog, name, any_path=False, base=service.project)
        options = RunOptions(timeout=timeout, parallel_limit=parallel_limit, context=context or {})
        if dry_run:
            return service.plan(workflow, parameters, options)
        run_id = service.run(workflow, parameters, options)
        return service.wait(run_id, wait_seconds, on_change=report)

    async def run_workflow(
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
        ctx: Context = None,  # type: ignore[assignment]
    ) -> RunResult:
        return await _call(
            start_and_wait,
            workflow_name,
            parameters,
            dry_run,
            timeout,
            parallel_limit,  # type: ignore[return-value]
            wait_seconds,
            context,
            _progress(ctx),
        )

    async def get_workflow_run(
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
        return await _call(service.wait, workflow_id, wait_seconds)  # type: ignore[return-value]

    async def cancel_workflow(
        workflow_id: RunId,
        reason: Annotated[
            str | None, Field(description="Why the run is cancelled (recorded with it).")
        ] = None,
    ) -> Cancelled:
        return await _call(service.cancel, workflow_id, reason)  # type: ignore[return-value]

    async def continue_workflow(
        workflow_id: RunId,
        output: Annotated[
            str, Field(description="What the agent produced for the step the run waits on.")
        ],
        context: Annotated[
            dict[str, Any] | None, Field(description="Context variables to add or change.")
        ] = None,
        wait_seconds: WaitSeconds = 30,
        artifacts: ArtifactsArg = None,
    ) -> RunResult:
        return await _call(
            service.continue_run, workflow_id, output, context, wait_seconds, artifacts
        )  # type: ignore[return-value]

    return [
        (
            run_workflow,
            dict(
                title="Run a workflow",
                annotations=writes("Run a workflow", destructive=True, idempotent=False),
                description=(
                    "Execute a workflow on the server: sequential, parallel and conditional steps, loops, retries and "
                    "timeouts. Pass {workflow_name, parameters?, dry_run?, timeout?, parallel_limit?, wait_seconds?}. "
                    "Waits up to wait_seconds, then returns {status, workflow_id, steps_completed, steps_total, "
                    "step_results, execution_time, error_message}; status is success, failed, partial, running, waiting "
                    "(a prompt step needs you: see waiting.step and answer with continue_workflow) or cancelled. "
                    "Command steps need a server started with --allow-commands (else error -32007); dry_run is always "
                    "allowed. Parameters failing the workflow's schema: -32602 with details."
                ),
            ),
        ),
        (
            get_workflow_run,
            dict(
                title="Get a run",
                annotations=read_only("Get a run"),
                description=(
                    "The state of a run: {status, workflow_id, steps_completed, steps_total, step_results, "
                    "execution_time, error_message, waiting?}. Unknown id: -32008."
                ),
            ),
        ),
        (
            cancel_workflow,
            dict(
                title="Cancel a run",
                annotations=writes("Cancel a run", destructive=True, idempotent=True),
                description=(
                    "Cancel a running workflow execution: its processes are stopped within seconds. Pass {workflow_id, "
                    "reason?}. Returns {status: cancelled, steps_completed}; a run already finished is reported as it "
                    "ended. Unknown id: -32008."
                ),
            ),
        ),
        (
            continue_workflow,
            dict(
                title="Continue a waiting run",
                annotations=writes("Continue a waiting run", destructive=False, idempotent=False),
                description=(
                    "Submit your output for the step a run waits on (status waiting). Pass {workflow_id, output, "
                    "context?, artifacts?}. The output is checked against the step's validation criteria, and artifacts "
                    "against its output contract and assessments (waiting.guidance names what is required: a loop's "
                    'continue/stop decision is {"kind": "wr.loop_control", "decision": ...}): when a check fails, the '
                    "run stays at the step and the result has outcome: blocked with issues and suggestions (fix and "
                    "call again); when it passes, the run goes on and the result (outcome: accepted) is its new state."
                ),
            ),
        ),
    ]


class _RecoveryKick:
    """Middleware: once the client is initialized, recover interrupted runs in the background."""

    def __init__(self, runs: _Runs) -> None:
        self.runs = runs

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method != "initialize" and not self.runs.service.started:
            self.runs.recover_soon()
        return result


def register(
    server: MCPServer, catalog: Any, *, allow_commands: bool, sandbox: bool = False
) -> Any:
    """Add the run tools to ``server``; returns the provider of the running runs for list_workflows.

    ``sandbox`` runs every command step under bubblewrap (a server's ``--sandbox``).
    """
    runs = _Runs(catalog, allow_commands, sandbox)
    for fn, meta in _tools(runs):
        server.add_tool(fn, name=fn.__name__, structured_output=True, **meta)
    server.middleware.append(_RecoveryKick(runs))
    return runs.running
