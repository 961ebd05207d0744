"""The session tools both editions share: start, inspect, checkpoint, resume.

A session is a durable run whose prompt steps the agent answers (`workrail_engine.sessions`).
These tools take upstream WorkRail 3.x's arguments and answer in its shapes (`_session_shapes`),
so the same four serve the default edition and ``--tools upstream``. Advancing is
``continue_workflow``: the upstream edition's is in `tools.upstream`; the default edition's run
tool of that name takes session tokens too.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import Field

from workrail_engine.navigator import next_step
from workrail_engine.sessions import workflow_hash
from workrail_mcp.tools._binding import ToolEnv, ToolSpec, read_only, writes
from workrail_mcp.tools._session_shapes import CONTINUE_TOOL, session_error, step_response
from workrail_mcp.tools._shapes import WorkflowId

__all__ = [
    "SPECS",
    "checkpoint_workflow",
    "inspect_workflow",
    "resume_session",
    "source_visibility",
    "start_workflow",
]

WorkspacePath = Annotated[
    str,
    Field(
        description=(
            "The absolute path of the workspace (repository) you work in; it is recorded with "
            "the session and its git branch and HEAD help resume_session find it again."
        ),
        min_length=1,
    ),
]
SessionRunId = Annotated[
    str | None,
    Field(
        description="Optional: a session id (wf-...) from an earlier answer: the only candidate.",
        pattern=r"^wf-[0-9a-f]{12}$",
    ),
]


def source_visibility(entry: Any) -> dict[str, Any]:
    kind = entry.source.kind
    return {"category": kind, "source": {"kind": kind, "displayName": kind.capitalize()}}


def _served_hash(env: ToolEnv, workflow_id: str) -> tuple[dict[str, Any], str]:
    definition = env.catalog.served(workflow_id)
    return definition, workflow_hash(definition)


def inspect_workflow(
    env: ToolEnv,
    workflowId: WorkflowId,
    workspacePath: WorkspacePath,
    mode: Annotated[
        Literal["metadata", "preview"],
        Field(description="metadata: name, version and hash; preview (default): also step one."),
    ] = "preview",
) -> dict[str, Any]:
    entry = env.catalog.get(workflowId)
    definition, digest = _served_hash(env, workflowId)
    compiled: dict[str, Any] = {
        "schemaVersion": 1,
        "sourceKind": "workflow",
        "workflowId": workflowId,
    }
    if mode == "preview":
        compiled.update(
            {
                key: definition[key]
                for key in ("name", "description", "version")
                if key in definition
            }
        )
        first = next_step(definition, [], {}).to_dict()
        step = first.get("step")
        if step:
            compiled["preview"] = {
                "stepId": step["id"],
                "title": step.get("title") or step["id"],
                "prompt": (first.get("guidance") or {}).get("prompt") or step.get("prompt", ""),
            }
    return {
        "workflowId": workflowId,
        "workflowHash": digest,
        "mode": mode,
        "compiled": compiled,
        "visibility": source_visibility(entry),
    }


def start_workflow(
    env: ToolEnv,
    workflowId: WorkflowId,
    workspacePath: WorkspacePath,
    goal: Annotated[
        str,
        Field(
            description=(
                "One sentence: what you are trying to get done. It becomes the context variable "
                "`goal` and is what resume_session searches first."
            ),
            min_length=1,
        ),
    ],
    modelTier: Annotated[
        Literal["lightweight", "mid", "heavy"] | None,
        Field(description="Optional: accepted for compatibility; it changes nothing here."),
    ] = None,
) -> dict[str, Any]:
    definition = env.catalog.served(workflowId)
    started = env.sessions.start(definition, goal=goal, workspace=workspacePath)
    return step_response(started, with_kind=False)


def checkpoint_workflow(
    env: ToolEnv,
    checkpointToken: Annotated[
        str,
        Field(
            description=(
                "The checkpointToken (ck_...) of the latest start_workflow or continue_workflow "
                "answer. Returns a resume token for another conversation; calling it again with "
                "the same token returns the same answer."
            ),
            min_length=1,
        ),
    ],
) -> dict[str, Any]:
    made = env.sessions.checkpoint(checkpointToken)
    return {
        "checkpointNodeId": f"{made['runId']}@{made['attempt']}",
        "resumeToken": made["resumeToken"],
        "nextCall": {"tool": CONTINUE_TOOL, "params": {"continueToken": made["continueToken"]}},
    }


_STRONG = {"matched_notes", "matched_exact_id", "matched_head_sha"}


def _candidate(found: dict[str, Any]) -> dict[str, Any]:
    why = found["whyMatched"]
    notes = found.get("lastNotes")
    strong = bool(_STRONG & set(why))
    return {
        "sessionId": found["runId"],
        "runId": found["runId"],
        "workflowId": found["workflowId"],
        "sessionTitle": found.get("goal") or found["workflowId"],
        "gitBranch": found.get("gitBranch"),
        "resumeToken": found["resumeToken"],
        "snippet": "\n\n".join(part for part in (found.get("goal"), notes) if part),
        "whyMatched": why,
        "confidence": "strong" if strong else "weak",
        "matchExplanation": (
            "matched " + ", ".join(w.removeprefix("matched_").replace("_", " ") for w in why)
            if why != ["recency_fallback"]
            else "no match: the most recent session"
        ),
        "pendingStepId": found.get("pendingStepId"),
        "pendingStepTitle": found.get("pendingStepTitle"),
        "isComplete": found["isComplete"],
        "status": found["status"],
        "workspacePath": found.get("workspace"),
        "gitHeadSha": found.get("gitHead"),
        "workflowHash": found.get("workflowHash"),
        "lastModifiedMs": round(found["updatedAt"] * 1000, 3),
        "ageSeconds": found.get("ageSeconds", round(time.time() - found["updatedAt"], 1)),
        "nextCall": {
            "tool": CONTINUE_TOOL,
            "params": {"continueToken": found["resumeToken"], "intent": "rehydrate"},
        },
    }


def resume_session(
    env: ToolEnv,
    workspacePath: WorkspacePath,
    query: Annotated[
        str | None,
        Field(description="Optional: words from the goal or notes of the session you look for."),
    ] = None,
    runId: SessionRunId = None,
    sessionId: SessionRunId = None,
    gitBranch: Annotated[
        str | None,
        Field(description="Optional: the git branch (read from the workspace if not given)."),
    ] = None,
    gitHeadSha: Annotated[
        str | None,
        Field(description="Optional: the git HEAD commit (40 hex).", pattern=r"^[0-9a-f]{40}$"),
    ] = None,
    sameWorkspaceOnly: Annotated[
        bool, Field(description="Only sessions started in this workspace.")
    ] = False,
) -> dict[str, Any]:
    found = env.sessions.resume(
        workspace=workspacePath,
        query=query,
        run_id=runId or sessionId,
        git_branch=gitBranch,
        git_head=gitHeadSha,
        same_workspace_only=sameWorkspaceOnly,
    )
    return {
        "candidates": [_candidate(c) for c in found["candidates"]],
        "totalEligible": found["totalEligible"],
    }


def _session_spec(fn: Any, name: str, title: str, annotations: Any, description: str) -> ToolSpec:
    return ToolSpec(
        fn,
        name=name,
        title=title,
        annotations=annotations,
        description=description,
        error_result=session_error,
    )


SPECS: list[ToolSpec] = [
    _session_spec(
        inspect_workflow,
        "inspect_workflow",
        "Inspect a workflow",
        read_only("Inspect a workflow"),
        "Before starting a session: a workflow's content hash (the version a session pins) and, "
        "in preview mode, its first step as a session would serve it. Pass {workflowId, "
        "workspacePath, mode?}. Unknown id: isError with code NOT_FOUND.",
    ),
    _session_spec(
        start_workflow,
        "start_workflow",
        "Start a session",
        writes("Start a session", destructive=False, idempotent=False),
        "Start a session: a durable run of a workflow whose steps you answer one at a time. "
        "Pass {workflowId, workspacePath, goal}. Returns the first pending step {stepId, title, "
        "prompt}, a continueToken (answer it with continue_workflow) and a checkpointToken "
        "(checkpoint_workflow, to resume in another conversation). The workflow's version is "
        "pinned for the whole session.",
    ),
    _session_spec(
        checkpoint_workflow,
        "checkpoint_workflow",
        "Checkpoint a session",
        writes("Checkpoint a session", destructive=False, idempotent=True),
        "Mark where a session stands, to pick it up from another conversation: pass "
        "{checkpointToken} from the latest answer; returns a resumeToken (st_...). It never "
        "advances the session; the same token again gives the same answer.",
    ),
    _session_spec(
        resume_session,
        "resume_session",
        "Find a session to resume",
        read_only("Find a session to resume"),
        "Find an earlier session from a new conversation, by words of its goal or notes, its "
        "workflow id, this workspace and its git branch/HEAD: at most 5 candidates, best first, "
        "each with its workflow, pending step, last notes, age and a resumeToken. Re-read one "
        "with continue_workflow {continueToken: resumeToken, intent: rehydrate}: the pending "
        "step comes back with the earlier steps' notes.",
    ),
]
