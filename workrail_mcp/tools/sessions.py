"""The session tools: start_workflow, checkpoint_workflow, resume_session, inspect_workflow.

Their arguments and results have the shapes of upstream WorkRail 3.x's tools of the same names
(tokens ``ct_``/``ck_``/``st_``, ``pending {stepId, title, prompt, agentRole?}``, ``nextIntent``,
``nextCall``), so an agent written for those works here; our ``continue_workflow`` (runs.py) takes
the continue token and upstream's ``output {notesMarkdown, artifacts}`` besides its own fields.
The engine does the work (`workrail_engine.sessions.SessionService`, on the run store); this
module only shapes. `session_response` and `candidate_response` are the shaping functions the
other tool edition reuses.

Error policy as for every tool: token problems are −32602 with ``data.reason``
(TOKEN_INVALID_FORMAT, TOKEN_BAD_SIGNATURE, TOKEN_SCOPE_MISMATCH); an answer another answer beat
is −32005 with ``data.reason: ANSWER_NOT_APPLIED`` and ``data.state``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.answers.model_loop import AskModel, answer_with_model
from workrail_engine.errors import EngineError, InvalidParams
from workrail_engine.result_shapes import Pending
from workrail_engine.sessions.model_answers import SessionForModel
from workrail_mcp.next_action import session_retry_call, with_retry_call
from workrail_mcp.tools._shapes import WorkflowId
from workrail_mcp.tools.binding import ToolEnv, ToolSpec, read_only, writes

if TYPE_CHECKING:  # the sessions engine (and its run store) loads with the first session call
    from workrail_engine.answers.confirmation import Confirm
    from workrail_engine.sessions import SessionService, SessionStep

__all__ = [
    "SPECS",
    "caller_workspace",
    "candidate_response",
    "session_response",
    "sessions_of",
    "source_visibility",
]

PREFERENCES = {"autonomy": "guided", "riskPolicy": "conservative"}


def sessions_of(env: ToolEnv) -> SessionService:
    if env.runs is None:
        raise EngineError("sessions are not available in this server")
    service: SessionService = env.runs.service.sessions
    return service


def _workspace(path: str | None, *, required: bool = True) -> str | None:
    if path is None and not required:
        return None
    if not path or not os.path.isabs(path):
        raise InvalidParams(
            "workspacePath must be the absolute path of your workspace directory",
            details="workspacePath must be an absolute path",
        )
    return os.path.normpath(path)


def caller_workspace(path: str | None) -> str | None:
    """The workspace a continue call names (optional there), as start_workflow recorded it; a
    path that is not absolute names no workspace a session can have been started in."""
    return os.path.normpath(path) if path and os.path.isabs(path) else None


def _next_intent(step: SessionStep) -> str:
    if step.is_complete:
        return "complete"
    if step.requires_confirmation:
        return "await_user_confirmation"
    return "perform_pending_then_continue"


def session_response(step: SessionStep) -> SessionResult:
    """A session's position in upstream's result shape (start, continue): ``kind`` ok | blocked,
    tokens, ``pending``, ``nextIntent``, ``nextCall`` — plus our ``runId`` and ``outcome``."""
    out: SessionResult = {
        "kind": "blocked" if step.outcome == "blocked" else "ok",
        "continueToken": step.continue_token,
        "checkpointToken": step.checkpoint_token,
        "isComplete": step.is_complete,
        "pending": step.pending,
        "preferences": dict(PREFERENCES),
        "nextIntent": _next_intent(step),
        "nextCall": None
        if step.is_complete or step.status != "waiting"
        else {"tool": "continue_workflow", "params": {"continueToken": step.continue_token}},
        "runId": step.run_id,
        "outcome": step.outcome,
    }
    if step.model_usage is not None:  # --sampling: what the run has asked of the client's model
        out["sampling"] = step.model_usage
    if step.confirmation is not None:  # the person's reply to the step's confirmation
        out["confirmation"] = step.confirmation
    if step.outcome == "blocked":
        retry = session_retry_call(step.continue_token, step.retry)
        out["blockers"] = with_retry_call(step.blockers, retry)
        out["retryable"] = True
        out["retryContinueToken"] = step.continue_token
        if step.validation is not None:
            out["validation"] = step.validation
        if step.assessment_followup is not None:
            out["assessmentFollowup"] = step.assessment_followup
    # Last, as upstream adds them: on a start or a re-read the workflow's references, and on an
    # advance what the step just answered recorded (its assessments).
    if step.references:
        out["references"] = step.references
    if step.step_context:
        out["stepContext"] = step.step_context
    # Forks (docs/sessions.md, Forking a session): a re-read of a step the session has moved
    # past says which session and step advancing branches from; the advance that branched says
    # where the new session (runId) came from.
    if step.fork_of:
        out["forkOf"] = step.fork_of
    if step.forked_from:
        out["forkedFrom"] = step.forked_from
    return out


def candidate_response(candidate: dict[str, Any], workspace: str | None) -> dict[str, Any]:
    """A resume candidate in upstream's shape, with our age and last notes besides; its
    ``nextCall`` names the caller's ``workspace``, which the re-read by a resume token needs."""
    why = candidate["whyMatched"]
    strong = {"matched_exact_id", "matched_notes", "matched_head_sha"}
    confidence = (
        "strong" if strong & set(why) else "weak" if why == ["recency_fallback"] else "medium"
    )
    snippet = (candidate.get("lastNotes") or candidate.get("goal") or "")[:1024]
    return {
        "sessionId": candidate["runId"],
        "runId": candidate["runId"],
        "workflowId": candidate["workflowId"],
        "sessionTitle": candidate.get("goal"),
        "gitBranch": candidate.get("gitBranch"),
        "resumeToken": candidate["resumeToken"],
        "snippet": snippet,
        "confidence": confidence,
        "matchExplanation": ", ".join(w.replace("_", " ") for w in why),
        "pendingStepId": candidate.get("pendingStepId"),
        "pendingStepTitle": candidate.get("pendingStepTitle"),
        "isComplete": candidate["isComplete"],
        "lastModifiedMs": int(candidate["updatedAt"] * 1000),
        "ageSeconds": candidate["ageSeconds"],
        "lastNotes": candidate.get("lastNotes"),
        "whyMatched": why,
        "forkedFrom": candidate.get("forkedFrom"),
        "nextCall": {
            "tool": "continue_workflow",
            "params": {
                "continueToken": candidate["resumeToken"],
                "intent": "rehydrate",
                "workspacePath": workspace,
            },
        },
    }


WorkspacePath = Annotated[
    str,
    Field(
        description="The absolute path of your workspace directory (the session is anchored to "
        "it, and to its git branch and HEAD, for resume_session).",
        min_length=1,
        max_length=4096,
    ),
]


class SessionResult(TypedDict):
    kind: str
    continueToken: str
    checkpointToken: str
    isComplete: bool
    pending: Pending | None
    preferences: dict[str, str]
    nextIntent: str
    nextCall: dict[str, Any] | None
    runId: str
    outcome: str
    blockers: NotRequired[dict[str, Any]]
    retryable: NotRequired[bool]
    retryContinueToken: NotRequired[str]
    validation: NotRequired[dict[str, list[str]]]
    assessmentFollowup: NotRequired[dict[str, str]]
    sampling: NotRequired[dict[str, Any]]
    confirmation: NotRequired[dict[str, Any]]
    references: NotRequired[list[dict[str, Any]]]
    stepContext: NotRequired[dict[str, Any]]
    forkOf: NotRequired[dict[str, Any]]
    forkedFrom: NotRequired[dict[str, Any]]


def start_workflow(
    env: ToolEnv,
    workflowId: WorkflowId,
    workspacePath: WorkspacePath,
    goal: Annotated[
        str,
        Field(
            description="One sentence saying what you are trying to accomplish (it becomes the "
            "context variable goal, and resume_session finds the session by it).",
            min_length=1,
            max_length=2000,
        ),
    ],
    modelTier: Annotated[
        Literal["lightweight", "mid", "heavy"] | None,
        Field(description="The model tier you run on (recorded; it changes nothing here)."),
    ] = None,
    confirm: Confirm | None = None,
    sample: AskModel | None = None,
) -> SessionResult:
    workspace = _workspace(workspacePath)
    served = env.catalog.served(workflowId)
    package = env.catalog.get(workflowId).source.directory.parent  # the folder shipping it
    step = sessions_of(env).start(served, goal=goal, workspace=workspace, package=package)
    return session_response(with_model(env, step, sample, confirm))


def with_model(
    env: ToolEnv, step: SessionStep, sample: AskModel | None, confirm: Confirm | None
) -> SessionStep:
    """The session after the client's model answered what it may (--sampling), else ``step``."""
    if (
        sample is None
        or env.model_limits is None
        or step.outcome == "replayed"
        or step.fork_of is not None  # an earlier step re-read: the model answers no branch
    ):
        return step
    service = sessions_of(env)
    target = SessionForModel(service, step, confirm)
    usage = answer_with_model(
        target, service.store, sample, env.model_limits, can_confirm=confirm is not None
    )
    moved = target.step
    moved.model_usage = usage.to_dict()
    return moved


class CheckpointResult(TypedDict):
    checkpointNodeId: str
    resumeToken: str
    nextCall: dict[str, Any] | None


def checkpoint_workflow(
    env: ToolEnv,
    checkpointToken: Annotated[
        str,
        Field(
            description="The checkpoint token (ck_...) of the latest start_workflow or "
            "continue_workflow result.",
            min_length=1,
            max_length=200,
        ),
    ],
) -> CheckpointResult:
    found = sessions_of(env).checkpoint(checkpointToken)
    return {
        "checkpointNodeId": f"{found['runId']}:{found['attempt']}",
        "resumeToken": found["resumeToken"],
        "nextCall": {
            "tool": "continue_workflow",
            "params": {"continueToken": found["continueToken"]},
        },
    }


class ResumeResult(TypedDict):
    candidates: list[dict[str, Any]]
    totalEligible: int


def resume_session(
    env: ToolEnv,
    workspacePath: WorkspacePath,
    query: Annotated[
        str | None,
        Field(
            description="Words to look for in the sessions' goals and notes and workflow ids "
            "(the user's own words work best).",
            min_length=1,
            max_length=256,
        ),
    ] = None,
    runId: Annotated[
        str | None, Field(description="An exact session id (wf-...).", max_length=64)
    ] = None,
    sessionId: Annotated[
        str | None, Field(description="The same as runId here.", max_length=64)
    ] = None,
    gitBranch: Annotated[
        str | None,
        Field(description="A git branch to match (default: the workspace's).", max_length=256),
    ] = None,
    gitHeadSha: Annotated[
        str | None,
        Field(
            description="A git commit to match (default: the workspace's HEAD).",
            pattern="^[0-9a-f]{40}$",
        ),
    ] = None,
    sameWorkspaceOnly: Annotated[
        bool | None,
        Field(
            description="Only sessions started in this workspace (the default); false widens "
            "the search to every workspace, on a server with one client (stdio) only."
        ),
    ] = None,
) -> ResumeResult:
    workspace = _workspace(workspacePath)
    if sameWorkspaceOnly is False and env.shared:
        raise InvalidParams(
            "this server is shared by several clients, so resume_session finds only the sessions "
            "started in your workspace: leave sameWorkspaceOnly out (or true)",
            details="sameWorkspaceOnly cannot be false on a shared server",
        )
    found = sessions_of(env).resume(
        workspace=workspace,
        query=query,
        run_id=runId or sessionId,
        git_branch=gitBranch,
        git_head=gitHeadSha,
        same_workspace_only=sameWorkspaceOnly is not False,
    )
    return {
        "candidates": [candidate_response(c, workspace) for c in found["candidates"]],
        "totalEligible": found["totalEligible"],
    }


class Inspected(TypedDict):
    workflowId: str
    workflowHash: str
    mode: str
    compiled: dict[str, Any]
    visibility: dict[str, Any]
    references: NotRequired[list[dict[str, Any]]]


def inspect_workflow(
    env: ToolEnv,
    workflowId: WorkflowId,
    workspacePath: WorkspacePath,
    mode: Annotated[
        Literal["metadata", "preview"],
        Field(description="metadata: name and description; preview (default): every step."),
    ] = "preview",
) -> Inspected:
    _workspace(workspacePath)
    served = env.catalog.served(workflowId)
    compiled: dict[str, Any] = (
        served
        if mode == "preview"
        else {k: served[k] for k in ("id", "name", "description", "version") if k in served}
    )
    from workrail_engine.sessions import workflow_hash

    inspected: Inspected = {
        "workflowId": workflowId,
        "workflowHash": workflow_hash(served),
        "mode": mode,
        "compiled": compiled,
        "visibility": source_visibility(env.catalog.get(workflowId)),
    }
    if served.get("references"):  # as declared: a session's start looks them up
        inspected["references"] = list(served["references"])
    return inspected


def source_visibility(entry: Any) -> dict[str, Any]:
    """Where a workflow comes from, in upstream's ``visibility`` shape (our source kinds)."""
    kind = entry.source.kind
    name = entry.source.name  # a workflow repository's name
    display = f"Repository {name}" if name else kind.capitalize()
    return {"category": kind, "source": {"kind": kind, "displayName": display}}


SPECS = [
    ToolSpec(
        start_workflow,
        name="start_workflow",
        title="Start a session",
        asks_person=True,
        samples=True,
        annotations=writes("Start a session", destructive=False, idempotent=False),
        description=(
            "Start a session: the server keeps your place in a workflow of prompt steps across "
            "calls and conversations, checks every answer, and lets you find the session again "
            "later (resume_session). Pass {workflowId, workspacePath (absolute), goal}. Returns "
            "{kind, continueToken, checkpointToken, isComplete, pending: {stepId, title, prompt}, "
            "nextIntent, nextCall, runId}: do the pending step, then call continue_workflow with "
            "{continueToken, output: {notesMarkdown, artifacts?}}. (workflow_next walks the same "
            "steps statelessly, with you carrying the progress; run_workflow runs a workflow "
            "with command steps on the server.)"
        ),
    ),
    ToolSpec(
        checkpoint_workflow,
        name="checkpoint_workflow",
        title="Checkpoint a session",
        annotations=writes("Checkpoint a session", destructive=False, idempotent=True),
        description=(
            "Get a resume token (st_...) for a session, to pick it up in a later conversation. "
            "Pass {checkpointToken} from the latest start_workflow or continue_workflow result. "
            "Idempotent. Returns {checkpointNodeId, resumeToken, nextCall}."
        ),
    ),
    ToolSpec(
        resume_session,
        name="resume_session",
        title="Find a session to resume",
        annotations=read_only("Find a session to resume"),
        description=(
            "Find an earlier session from a new conversation: by words of its goal and notes "
            "(query), its workflow id, and the workspace's git branch and HEAD. Pass "
            "{workspacePath, query?, runId?, gitBranch?, gitHeadSha?, sameWorkspaceOnly?}; only "
            "sessions started in workspacePath are found. "
            "Returns {candidates (at most 5, best first: runId, workflowId, pendingStepId, "
            "lastNotes, ageSeconds, whyMatched, resumeToken, nextCall), totalEligible}. Resume "
            "with continue_workflow {continueToken: resumeToken, intent: rehydrate, "
            "workspacePath}: it shows the pending step with the earlier steps' notes and a "
            "continue token to advance."
        ),
    ),
    ToolSpec(
        inspect_workflow,
        name="inspect_workflow",
        title="Inspect a workflow",
        annotations=read_only("Inspect a workflow"),
        description=(
            "A workflow as a session would run it: {workflowId, workflowHash (the content hash "
            "a session pins), mode, compiled}. Pass {workflowId, workspacePath, mode?: "
            "metadata|preview}. (workflow_get returns the same workflow without the hash.)"
        ),
    ),
]
