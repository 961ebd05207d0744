"""The orchestrator spec's catalog tools: list_workflows and create_workflow.

The run tools (run_workflow, cancel_workflow, ...) are in workrail_mcp.tools.runs.
"""

import json
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.catalog import CatalogProtocol, user_directory
from workrail_engine.definition.ids import (
    ID_MAX_LENGTH,
    ID_MIN_LENGTH,
    WORKFLOW_ID_PATTERN,
    WORKFLOW_ID_RULE,
)
from workrail_engine.errors import InvalidParams, InvalidWorkflow
from workrail_engine.result_shapes import RunSummary
from workrail_mcp.tools._files import existing_workflow_file, target_path, write_atomically
from workrail_mcp.tools._shapes import WorkflowSummary
from workrail_mcp.tools.binding import ToolEnv, ToolSpec, read_only, writes
from workrail_mcp.tools.workflows import summary_of

__all__ = ["SPECS", "create_workflow", "list_workflows"]


class WorkflowCatalog(TypedDict):
    workflows: list[WorkflowSummary]
    running_count: int
    running: NotRequired[list[RunSummary]]


def _running(env: ToolEnv) -> tuple[int, list[RunSummary]]:
    if env.runs is None:
        return 0, []
    runs = list(env.runs.running())
    if env.shared:  # a session is found by resume_session, in its own workspace only
        runs = [run for run in runs if run.get("kind") != "session"]
    return len(runs), runs


def list_workflows(
    env: ToolEnv,
    category: Annotated[
        str | None,
        Field(
            description="Only workflows of this category (e.g. development, review, documentation, operations)."
        ),
    ] = None,
    include_running: Annotated[
        bool,
        Field(
            description="Also list the runs in progress (their ids are the workflow_id of cancel_workflow)."
        ),
    ] = False,
) -> WorkflowCatalog:
    summaries = [summary_of(entry) for entry in env.catalog.entries()]
    if category is not None:
        summaries = [s for s in summaries if s["category"].lower() == category.lower()]
    count, runs = _running(env)
    result: WorkflowCatalog = {"workflows": summaries, "running_count": count}
    if include_running:
        result["running"] = runs
    return result


class Created(TypedDict):
    status: str
    workflow_path: str
    warnings: NotRequired[list[dict[str, Any]]]


WorkflowName = Annotated[
    str,
    Field(
        description=(
            f"The new workflow's id and file name ({WORKFLOW_ID_RULE}); "
            "it is written as <name>.json in the project's workflow directory."
        ),
        pattern=WORKFLOW_ID_PATTERN,
        min_length=ID_MIN_LENGTH,
        max_length=ID_MAX_LENGTH,
    ),
]

Definition = Annotated[
    dict[str, Any],
    Field(
        description=(
            "The workflow definition: {name, description, steps: [{id, title, prompt, ...}], ...} as "
            "described by workflow_schema. Its id may be left out (the name is used) but must equal "
            "the name when given."
        )
    ),
]


def _serialize(name: str, definition: dict[str, Any]) -> str:
    definition = dict(definition)
    declared = definition.setdefault("id", name)
    if declared != name:
        raise InvalidParams(
            f"definition.id {declared!r} differs from name {name!r}", name=name, id=declared
        )
    return json.dumps(definition, indent=2, ensure_ascii=False) + "\n"


def _lint(text: str, path: str, catalog: CatalogProtocol) -> list[Any]:
    from workrail_engine.lint import lint_document
    from workrail_engine.text.document import parse_document

    document = parse_document(text, path=path, fmt="json")
    diagnostics = lint_document(document, catalog.ids(), catalog.routine)
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        raise InvalidWorkflow(
            f"The definition has {len(errors)} error(s); first: {errors[0].code} {errors[0].message} at {errors[0].pointer or '/'}",
            diagnostics=[d.to_dict() for d in diagnostics],
        )
    return [d.to_dict() for d in diagnostics]


def create_workflow(
    env: ToolEnv,
    name: WorkflowName,
    definition: Definition,
    overwrite: Annotated[
        bool,
        Field(
            description="Replace an existing workflow file of that name (default false: refuse)."
        ),
    ] = False,
    location: Annotated[
        Literal["project", "user"],
        Field(
            description="project (default): the project's workflows/ directory; user: ~/.workrail/workflows, for every project."
        ),
    ] = "project",
) -> Created:
    text = _serialize(name, definition)
    directory = env.catalog.writable_directory(location)
    # The project's directory may come from a cloned repository: it must stay in the project.
    # The user's directory is the user's own choice (WORKRAIL_HOME), wherever it links.
    from_project = location == "project" and directory != user_directory()
    project = directory.parent if from_project else None
    target = target_path(directory, name, inside=project)
    warnings = _lint(text, str(target), env.catalog)
    existing = existing_workflow_file(directory, name)
    if existing is not None and not overwrite:
        raise InvalidParams(
            f"Workflow {name!r} already exists at {existing}; pass overwrite=true to replace it",
            workflow_path=str(existing),
        )
    if existing is not None and existing != target:
        raise InvalidParams(
            f"Workflow {name!r} exists as {existing.name}; edit or remove that file instead",
            workflow_path=str(existing),
        )
    write_atomically(target, text, overwrite=overwrite)
    # The agent will look for it next: re-scan now rather than at the next due time.
    env.catalog.refresh(force=True)
    result: Created = {
        "status": "updated" if existing else "created",
        "workflow_path": str(target),
    }
    if warnings:
        result["warnings"] = warnings
    return result


SPECS = [
    ToolSpec(
        list_workflows,
        name="list_workflows",
        title="List workflows and runs",
        description=(
            "List workflow definitions, optionally of one category, with the number of runs in "
            "progress. Pass {category?, include_running?}. Returns {workflows: [{id, name, "
            "description, category, version}], running_count} (plus running: [...] when "
            "include_running is true: the run ids to pass to get_workflow_run, cancel_workflow "
            "and continue_workflow). Same catalog as workflow_list, which takes no filter and "
            "says nothing of runs; use this one before run_workflow."
        ),
        annotations=read_only("List workflows and runs"),
    ),
    ToolSpec(
        create_workflow,
        name="create_workflow",
        title="Create a workflow",
        description=(
            "Save a new workflow definition into the project's workflow directory so every tool can "
            "use it. Pass {name, definition, overwrite?, location?}. The definition is checked first (the same "
            "diagnostics as `workrail validate` and workflow_lint): with any error nothing is written and the call fails "
            "with code -32002 and data.diagnostics [{code, message, pointer}]. An existing workflow "
            "of that name is only replaced with overwrite=true. Returns {status: created|updated, "
            "workflow_path}. Call workflow_lint first to iterate on a draft without writing."
        ),
        annotations=writes("Create a workflow", destructive=True, idempotent=True),
    ),
]
