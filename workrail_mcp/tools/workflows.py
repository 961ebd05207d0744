"""The API spec's tools: list, get, next step, validate a step's output (mcp-api-v1.0.md)."""

from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.catalog import WorkflowEntry
from workrail_engine.definition.ids import (
    ID_MIN_LENGTH,
    SERVED_STEP_ID_MAX_LENGTH,
    SERVED_STEP_ID_PATTERN,
)
from workrail_engine.definition.steps import find_step
from workrail_mcp.next_action import next_retry_call, phrase_next, with_retry_call
from workrail_mcp.tools._shapes import (
    AnyJson,
    ArtifactsArg,
    ContextArg,
    StepId,
    WorkflowId,
    WorkflowSummary,
)
from workrail_mcp.tools.binding import ToolEnv, ToolSpec, read_only

__all__ = [
    "SPECS",
    "summary_of",
    "workflow_get",
    "workflow_list",
    "workflow_next",
    "workflow_validate",
]


def summary_of(entry: WorkflowEntry) -> WorkflowSummary:
    # The spec requires all five keys; a workflow may omit the optional ones.
    summary = entry.summary()
    return {
        "id": summary.get("id") or "",
        "name": summary.get("name") or "",
        "description": summary.get("description") or "",
        "category": summary.get("category") or "",
        "version": summary.get("version") or "",
        "source": entry.source.label,  # a repository's as repo:NAME
    }


class WorkflowList(TypedDict):
    workflows: list[WorkflowSummary]


def _workflow_list(entries: list[WorkflowEntry]) -> WorkflowList:
    return {"workflows": [summary_of(e) for e in entries]}


def workflow_list(env: ToolEnv) -> WorkflowList:
    return env.catalog_view("workflow_list", _workflow_list)


class Workflow(TypedDict):
    """A workflow definition (the full shape is the resource workrail://schema/workflow)."""

    id: str
    name: str
    steps: list[dict[str, Any]]
    description: NotRequired[str]
    version: NotRequired[str]
    category: NotRequired[str]


def workflow_get(env: ToolEnv, id: WorkflowId) -> Workflow:
    return env.catalog.get(id).definition


class LoopPosition(TypedDict):
    """Where the agent is in a loop (informational; the bookkeeping itself is in context._loops)."""

    id: str
    type: str
    iteration: int
    index: int
    maxIterations: int
    total: NotRequired[int]
    item: NotRequired[Annotated[AnyJson, Field(description="The current item of a forEach loop.")]]


class NextStep(TypedDict):
    step: Annotated[
        dict[str, Any] | None, Field(description="The step to do now; null when isComplete.")
    ]
    guidance: Annotated[
        dict[str, Any],
        Field(
            description="{prompt, modelHint?, requiresConfirmation, validationCriteria}: how to do the step."
        ),
    ]
    isComplete: bool
    context: Annotated[
        dict[str, Any],
        Field(
            description=(
                "The context to pass back in the next workflow_next call (add your own variables to it). "
                "It carries loop progress under _loops: keep that unchanged."
            )
        ),
    ]
    skipped: Annotated[
        list[str], Field(description="Steps passed over because their runCondition is false.")
    ]
    loop: NotRequired[
        Annotated[LoopPosition, Field(description="Present when the step is inside a loop.")]
    ]
    notes: NotRequired[
        Annotated[
            list[str],
            Field(
                description="Things the agent should know (a loop restarted or stopped, a "
                "condition that a value's type made false)."
            ),
        ]
    ]
    blocked: NotRequired[
        Annotated[
            dict[str, Any],
            Field(
                description="{stepId, issues, suggestions, followUps, blockers}: the artifacts "
                "handed over with that step failed its output contract or assessment, so it is "
                "not complete and is the step returned; each blocker's retryCall is the "
                "workflow_next call with artifacts that pass."
            ),
        ]
    ]
    nextAction: NotRequired[
        Annotated[
            dict[str, Any],
            Field(
                description="What to report once the step is done, as data: complete (the id to "
                "append to completedSteps), completeEach?, repeatsPerIteration?, keepContext?, "
                "checkOutput?, outputTo? (the context paths, steps.ID.output, where a later step "
                "reads this step's output) (the guidance says the same in words)."
            ),
        ]
    ]


CompletedSteps = Annotated[
    list[Annotated[str, Field(pattern=SERVED_STEP_ID_PATTERN)]] | None,
    Field(
        description=(
            "The ids of the steps you completed, in the order you completed them: a log, [] (or "
            "left out) at the start. "
            "Append each step's id when you finish it; never reorder, deduplicate or drop entries. A loop's "
            "body steps are appended once per iteration, so their ids repeat."
        )
    ),
]

CurrentStep = Annotated[
    str | None,
    Field(
        description="Optional: the id of the step just worked on (it is checked to exist).",
        pattern=SERVED_STEP_ID_PATTERN,
        min_length=ID_MIN_LENGTH,
        max_length=SERVED_STEP_ID_MAX_LENGTH,
    ),
]

NextContext = Annotated[
    dict[str, Any] | None,
    Field(
        description=(
            "The context returned by your previous workflow_next call, passed back as it came (it holds "
            "loop progress under _loops), plus any variables the steps asked you to set, e.g. "
            '{"taskScope": "large"}, and the output of each finished step that a later step reads, '
            'under steps: {"steps": {"plan": {"output": "..."}}}. Omit or {} on the first call.'
        ),
    ),
]


def workflow_next(
    env: ToolEnv,
    workflowId: WorkflowId,
    completedSteps: CompletedSteps = None,
    currentStep: CurrentStep = None,
    context: NextContext = None,
    artifacts: ArtifactsArg = None,
) -> NextStep:
    from workrail_engine.serving.navigator import next_step

    definition = env.catalog.served(workflowId)
    found = next_step(
        definition,
        completedSteps or [],
        context or {},
        current_step=currentStep,
        artifacts=artifacts,
    )
    result: NextStep = {
        "step": found.step,
        "guidance": phrase_next(found.guidance, found.next_action),
        "isComplete": found.is_complete,
        "context": found.context,
        "skipped": found.skipped,
    }
    if found.loop is not None:
        result["loop"] = _loop_position(found.loop)
    if found.notes:
        result["notes"] = found.notes
    blocked = found.blocked
    if blocked is not None:
        if blocked:  # each blocker with the call that hands over artifacts that pass
            call = next_retry_call(
                workflowId, list(completedSteps or []), context or {}, blocked.pop("retry", None)
            )
            blocked["blockers"] = with_retry_call(blocked["blockers"], call)["blockers"]
        result["blocked"] = blocked
    if found.next_action is not None:
        result["nextAction"] = found.next_action
    return result


def _loop_position(loop: dict[str, Any]) -> LoopPosition:
    """The navigator's position in a loop (`serving.navigator`), in the result's shape."""
    position: LoopPosition = {
        "id": loop["id"],
        "type": loop["type"],
        "iteration": loop["iteration"],
        "index": loop["index"],
        "maxIterations": loop["maxIterations"],
    }
    if "total" in loop:
        position["total"] = loop["total"]
    if "item" in loop:
        position["item"] = loop["item"]
    return position


class Validation(TypedDict):
    valid: bool
    issues: list[str]
    suggestions: list[str]


# An empty output is judged by the step's criteria (upstream's `length {min: 0}` accepts it).
StepOutput = Annotated[str, Field(description="The output the agent produced for that step.")]


def workflow_validate(
    env: ToolEnv,
    workflowId: WorkflowId,
    stepId: StepId,
    output: StepOutput,
    context: ContextArg = None,
    artifacts: ArtifactsArg = None,
) -> Validation:
    from workrail_engine.errors import InvalidCriteria
    from workrail_engine.evaluation.rules import criteria_problems
    from workrail_engine.evaluation.step_checks import check_answer

    definition = env.catalog.served(workflowId)
    step = find_step(definition, stepId, workflowId)
    criteria = step.get("validationCriteria")
    problems = criteria_problems(criteria) if criteria is not None else []
    if problems:
        raise InvalidCriteria(
            f"Step {stepId!r} has invalid validation criteria: {problems[0].message}",
            workflowId=workflowId,
            stepId=stepId,
            problems=[
                {"pointer": p.pointer, "code": p.code, "message": p.message} for p in problems
            ],
        )
    check = check_answer(definition, step, output, artifacts, context or {})
    return {
        "valid": check.valid,
        "issues": [*check.issues, *check.followups],
        "suggestions": check.suggestions,
    }


SPECS = [
    ToolSpec(
        workflow_list,
        name="workflow_list",
        title="List workflows",
        description=(
            "List every workflow this server offers. Call this first to find a workflow for the task "
            "at hand. Takes no arguments. Returns {workflows: [{id, name, description, category, "
            "version, source}]}; pass an id to workflow_get or workflow_next. (list_workflows lists "
            "the same catalog with a category filter and the runs in progress.)"
        ),
        annotations=read_only("List workflows"),
    ),
    ToolSpec(
        workflow_get,
        name="workflow_get",
        title="Get a workflow",
        description=(
            "Read one workflow in full: its preconditions, clarification prompts, meta guidance and "
            "every step with its prompt, conditions and validation criteria. Pass {id}. Use it to "
            "preview a workflow; to work through one, prefer workflow_next. Unknown ids fail with "
            "code -32001 and data.closest, the most similar ids."
        ),
        annotations=read_only("Get a workflow"),
    ),
    ToolSpec(
        workflow_next,
        name="workflow_next",
        title="Next step of a workflow",
        description=(
            "Get the next step to do. Stateless: the server keeps nothing, each call carries your "
            "progress; this is how to follow a workflow of prompt steps yourself, in this "
            "conversation. (To have the server keep the state and execute command steps, start a run "
            "with run_workflow instead.) Pass "
            "{workflowId, completedSteps, context}: completedSteps is the log of step ids you finished, in "
            "order ([] at the start; append, never reorder or deduplicate: a loop's body steps are appended "
            "once per iteration); context is the context returned by your previous call, passed back "
            "unchanged plus any variables the steps asked you to set (they decide which conditional steps "
            "run). A step's prompt may show what an earlier step produced ({{steps.ID.output}}): put each "
            'finished step\'s output in the context as steps.ID.output, e.g. {"steps": {"analyze-task": '
            '{"output": "..."}}} (nextAction.outputTo names the paths a later step reads), and the '
            "workflow's parameters under parameters (declared defaults are filled in). Returns {step, guidance: {prompt, modelHint, requiresConfirmation, validationCriteria}, "
            "isComplete, context, skipped, loop?, notes?, nextAction?, blocked?}. Do the step, append its id to completedSteps and "
            "call again with the returned context, until isComplete is true. If requiresConfirmation is "
            "true, ask the user before moving on. When the guidance names a required artifact (an output "
            "contract, a loop decision, an assessment), pass it in artifacts with the call that marks "
            "the step complete; if it does not pass, the result has blocked and the same step again."
        ),
        annotations=read_only("Next step of a workflow"),
    ),
    ToolSpec(
        workflow_validate,
        name="workflow_validate",
        title="Check a step's output",
        description=(
            "Check the output you produced for a step against that step's validation criteria before "
            "marking it complete. Pass {workflowId, stepId, output} and the same context you gave "
            "workflow_next, plus the artifacts the step's guidance asks for (output contract, assessment). "
            "Returns {valid, issues, suggestions}: when valid is false, fix the issues and check again "
            "(an assessment at a level that requires follow-up is an issue to address). A step without "
            "criteria, contract or assessments is always valid."
        ),
        annotations=read_only("Check a step's output"),
    ),
]
