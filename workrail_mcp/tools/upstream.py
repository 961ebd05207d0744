"""The ``--tools upstream`` edition: upstream WorkRail 3.x's six session tools, on our sessions.

An agent or client configured for upstream (tool names, arguments, result and error shapes as
observed from v3.121.0, tests/fixtures/upstream_sessions/) works unchanged: ``list_workflows``,
``inspect_workflow``, ``start_workflow``, ``continue_workflow``, ``checkpoint_workflow``,
``resume_session``. Four are the shared session tools (`tools.sessions`); the two here differ from
the default edition's tools of the same names (the orchestrator's ``list_workflows`` and the run
tool ``continue_workflow``, which also takes tokens). Every tool of the edition answers errors in
upstream's shape (`_upstream_errors`). Upstream's ``manage_workflow_source``, onboarding step,
console and daemon are not part of it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from workrail_engine.answers.model_loop import AskModel
from workrail_engine.catalog import source_counts
from workrail_engine.definition.workflow_tags import tag_summary, workflow_tags
from workrail_engine.errors import InvalidParams
from workrail_mcp.tools._upstream_errors import upstream_error
from workrail_mcp.tools.binding import ToolEnv, ToolSpec, read_only, writes
from workrail_mcp.tools.sessions import SPECS as SESSION_SPECS
from workrail_mcp.tools.sessions import (
    WorkspacePath,
    caller_workspace,
    session_response,
    sessions_of,
    source_visibility,
    with_model,
)

if TYPE_CHECKING:  # the sessions engine (and its run store) loads with the first session call
    from workrail_engine.answers.confirmation import Confirm
    from workrail_engine.catalog import CatalogProtocol, WorkflowEntry
    from workrail_engine.sessions import SessionStep

__all__ = ["UPSTREAM_SPECS", "continue_session", "list_session_workflows"]


def _entry(entry: WorkflowEntry) -> dict[str, Any]:
    summary = entry.summary()
    return {
        "workflowId": entry.id,
        "name": summary.get("name") or entry.id,
        "description": summary.get("description") or "",
        "version": summary.get("version") or "",
        # The hash a session pins is of the compiled workflow; compiling every workflow to list
        # them took 6 s for 2,000. inspect_workflow gives it, per workflow.
        "workflowHash": None,
        "kind": "workflow",
        "tags": workflow_tags(entry.id, entry.definition.get("tags")),
        "visibility": source_visibility(entry),
    }


def _listing(entries: list[WorkflowEntry]) -> dict[str, Any]:
    workflows = [_entry(e) for e in entries]
    summary = tag_summary((w["workflowId"], w["tags"]) for w in workflows)
    return {"workflows": workflows, "tagSummary": summary}


# Our source kinds in upstream's source catalog: (category, source kind, source mode).
_UPSTREAM_SOURCE = {
    "bundled": ("built_in", "bundled", "built_in"),
    "user": ("personal", "user", "personal"),
    "project": ("legacy_project", "project", "legacy_project"),
    "repo": ("external", "git", "live_directory"),
}
_OTHER_SOURCE = ("external", "custom", "live_directory")  # WORKRAIL_WORKFLOW_PATH, --workflows


def _source_catalog(catalog: CatalogProtocol) -> list[dict[str, Any]]:
    """Where the workflows come from, in upstream's source-catalog shape: each source with the
    workflows served from it and those a later source shadows."""
    listed = []
    for count in source_counts(catalog):
        source = count.source
        category, kind, mode = _UPSTREAM_SOURCE.get(source.kind, _OTHER_SOURCE)
        display = f"Repository {source.name}" if source.name else source.kind.capitalize()
        key = "built_in" if source.kind == "bundled" else f"{kind}:{source.directory}"
        listed.append(
            {
                "sourceKey": key,
                "category": category,
                "source": {"kind": kind, "displayName": display},
                "sourceMode": mode,
                "effectiveWorkflowCount": count.served,
                "totalWorkflowCount": count.served + len(count.shadowed),
                "shadowedWorkflowCount": len(count.shadowed),
            }
        )
    return listed


def list_session_workflows(
    env: ToolEnv,
    workspacePath: WorkspacePath,
    includeSources: Annotated[
        bool | None,
        Field(description="Also list where the workflows come from (sources), with their counts."),
    ] = None,
    tags: Annotated[
        list[str] | None,
        Field(description="Optional: only workflows carrying one of these tags (see tagSummary)."),
    ] = None,
) -> dict[str, Any]:
    listing = env.catalog_view("upstream_list", _listing)
    if includeSources:
        # as upstream's source catalog: every workflow, where they come from, no tag summary
        return {"workflows": listing["workflows"], "sources": _source_catalog(env.catalog)}
    if not tags:
        return listing
    wanted = set(tags)
    chosen = [w for w in listing["workflows"] if wanted & set(w["tags"])]
    return {"workflows": chosen, "tagSummary": listing["tagSummary"]}


Output = Annotated[
    dict[str, Any] | None,
    Field(
        description=(
            "Your answer to the pending step: {notesMarkdown: what you did, decided and produced "
            "(markdown; required unless the step says notes are optional), artifacts?: [objects "
            "whose kind names them, e.g. wr.loop_control]}."
        ),
        json_schema_extra={
            "properties": {
                "notesMarkdown": {"type": "string", "minLength": 1},
                "artifacts": {"type": "array", "items": {}},
            },
            "additionalProperties": False,
        },
    ),
]


def _answer(output: dict[str, Any] | None, notes: str | None, artifacts: Any) -> tuple[Any, Any]:
    output = dict(output or {})
    unknown = sorted(set(output) - {"notesMarkdown", "artifacts"})
    if unknown:
        raise InvalidParams(
            f"output accepts notesMarkdown and artifacts, not {', '.join(unknown)}",
            details=f"unexpected output keys: {', '.join(unknown)}",
        )
    if output.get("notesMarkdown") == "":  # upstream's schema: at least one character
        raise InvalidParams(
            "output.notesMarkdown is empty: send your notes (at least one character), or leave "
            "notesMarkdown out on a step whose notes are optional",
            validationErrors=[{"path": "output.notesMarkdown", "message": "must not be empty"}],
        )
    return output.get("notesMarkdown", notes), output.get("artifacts", artifacts)


def _answers(output: dict[str, Any] | None) -> bool:
    """Whether ``output`` answers the step: upstream reads an output with neither notes nor
    artifacts (``{}``) as no output, a re-read unless the intent says advance."""
    return bool(output) and ("notesMarkdown" in output or "artifacts" in output)


def continue_session(
    env: ToolEnv,
    continueToken: Annotated[
        str,
        Field(
            description=(
                "A continueToken (ct_...) from the latest start_workflow / continue_workflow "
                "answer: advances or re-reads the session; or a resumeToken (st_...) from "
                "resume_session / checkpoint_workflow: re-reads only. Pass it exactly as received."
            ),
            min_length=1,
        ),
    ],
    intent: Annotated[
        Literal["advance", "rehydrate"] | None,
        Field(description="advance (the default when output is given) or rehydrate (re-read)."),
    ] = None,
    output: Output = None,
    context: Annotated[
        dict[str, Any] | None,
        Field(description="Optional: context variables to add or change (conditions read them)."),
    ] = None,
    workspacePath: Annotated[
        str | None,
        Field(
            description="Optional: the workspace you work in; a re-read by a resumeToken needs "
            "the workspace the session was started in."
        ),
    ] = None,
    contextVariables: Annotated[
        dict[str, Any] | None, Field(description="Older name of context.")
    ] = None,
    notes: Annotated[str | None, Field(description="Older name of output.notesMarkdown.")] = None,
    artifacts: Annotated[
        list[Any] | None, Field(description="Older name of output.artifacts.")
    ] = None,
    confirm: Confirm | None = None,
    sample: AskModel | None = None,
) -> dict[str, Any]:
    answer_notes, answer_artifacts = _answer(output, notes, artifacts)
    if intent is None and _answers(output):
        intent = "advance"
    step = sessions_of(env).continue_session(
        continueToken,
        notes=answer_notes,
        artifacts=answer_artifacts,
        context=context if context is not None else contextVariables,
        intent=intent,
        confirm=confirm,
        workspace=caller_workspace(workspacePath),
    )
    return upstream_step(with_model(env, step, sample, confirm))


def upstream_step(step: SessionStep) -> dict[str, Any]:
    """The shared session shape as upstream answers ``continue_workflow``: a replay is the very
    answer recorded (no ``outcome`` saying it is one), a re-read says ``rehydrate_only``."""
    body: dict[str, Any] = {**session_response(step)}
    del body["outcome"]
    if step.is_complete:  # upstream's finished session answers no tokens: nothing to continue
        del body["continueToken"], body["checkpointToken"]
    if step.outcome == "current" and not step.is_complete:
        body["nextIntent"] = "rehydrate_only"
    return body


_LIST = ToolSpec(
    list_session_workflows,
    name="list_workflows",
    title="List workflows",
    annotations=read_only("List workflows"),
    error_result=upstream_error,
    description=(
        "The workflows you can start a session of (start_workflow): {workflows: [{workflowId, "
        "name, description, version, tags, visibility}], tagSummary: [{id, count, examples}]}. "
        "Pass {workspacePath, tags?} — tags narrows the list: a workflow's own tags, upstream's "
        "functional tags (coding, review_audit, investigation, …) or a namespace (acme for "
        "acme.* workflows). workflowHash is null here: "
        "inspect_workflow gives the hash a session pins."
    ),
)
_CONTINUE = ToolSpec(
    continue_session,
    name="continue_workflow",
    title="Answer or re-read a session step",
    asks_person=True,
    samples=True,
    annotations=writes("Answer or re-read a session step", destructive=False, idempotent=True),
    error_result=upstream_error,
    description=(
        "Answer the pending step of a session, or re-read it. Advance: {continueToken, output: "
        "{notesMarkdown, artifacts?}, context?}; the answer is checked (notes, validation "
        "criteria, output contract, assessments) and applied exactly once — kind ok with the next "
        "pending step and new tokens, or kind blocked with blockers and the retryContinueToken to "
        "send the corrected answer with. The same token sent again returns the recorded answer; "
        "a different answer to a step already answered is refused with where the session is now. "
        "Re-read: {continueToken, intent: rehydrate}, or a resumeToken (which cannot advance). "
        "A re-read of an earlier step's token shows that step (forkOf) with a continueToken that "
        "branches the session there: advancing it makes a new session (forkedFrom), which you "
        "continue; the old one stays as it is."
    ),
)

_SHARED = {spec.name: replace(spec, error_result=upstream_error) for spec in SESSION_SPECS}

# Upstream's order of its tools/list.
UPSTREAM_SPECS: list[ToolSpec] = [
    _LIST,
    _SHARED["inspect_workflow"],
    _SHARED["start_workflow"],
    _CONTINUE,
    _SHARED["checkpoint_workflow"],
    _SHARED["resume_session"],
]
