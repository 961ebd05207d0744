"""The workflows pages: the catalog (search, filters, invalid files) and one workflow (diagram,
step panel, dry-run form, start button)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from workrail_engine.definition.steps import walk_steps
from workrail_engine.errors import EngineError, InvalidCriteria, InvalidWorkflow, WorkflowNotFound
from workrail_engine.evaluation.rules import describe_criteria
from workrail_engine.evaluation.templates import find_references
from workrail_engine.runs import MASK, RunOptions, SecretSet
from workrail_mcp.dashboard.diagram import condition_words, loop_words, workflow_svg
from workrail_mcp.dashboard.forms import parameter_fields, parameters_from_form

__all__ = ["workflow_page", "workflows_page", "dry_run", "start_run"]


SHOWN_AT_MOST = 200  # cards on one page; a catalog of 10,000 is searched, not scrolled


def _matches(entry: Any, query: str) -> bool:
    d = entry.definition
    haystack = " ".join(
        [entry.id, str(d.get("name", "")), str(d.get("description", ""))]
        + [str(t) for t in d.get("tags") or []]
    ).lower()
    return all(word in haystack for word in query.lower().split())


async def workflows_page(request: Request) -> Response:
    state = request.app.state
    query = request.query_params.get("q", "").strip()
    category = request.query_params.get("category", "")
    source = request.query_params.get("source", "")

    def gather() -> dict[str, Any]:
        entries = state.catalog.entries()
        hidden = {s.workflow_id: s.hidden for s in state.catalog.shadowed()}
        categories = sorted(
            {str(e.definition.get("category")) for e in entries if e.definition.get("category")}
        )
        sources = sorted({e.source.label for e in entries})
        shown = [
            e
            for e in entries
            if (not query or _matches(e, query))
            and (not category or e.definition.get("category") == category)
            and (not source or e.source.label == source)
        ]
        invalid = state.invalid_files.listing(state.catalog.invalid_files())
        return {
            "workflows": [
                {
                    "id": e.id,
                    "name": e.definition.get("name", e.id),
                    "description": e.definition.get("description", ""),
                    "category": e.definition.get("category", ""),
                    "tags": [str(t) for t in e.definition.get("tags") or []],
                    "version": e.definition.get("version", ""),
                    "source": e.source.label,
                    "path": str(e.path),
                    "shadows": [str(p) for p in hidden.get(e.id, ())],
                }
                for e in shown[:SHOWN_AT_MOST]
            ],
            "matched": len(shown),
            "total": len(entries),
            "categories": categories,
            "sources": sources,
            "invalid": invalid,
        }

    data = await anyio.to_thread.run_sync(gather)
    return state.pages.page(
        request,
        "workflows.html",
        nav="workflows",
        query=query,
        category=category,
        source=source,
        **data,
    )


def _masked(text: str, secrets: SecretSet) -> str:
    """A template string as shown to a reader: secret references and values as ``***``."""
    out = text
    for ref in reversed(find_references(text)):
        if ref.namespace == "secrets":
            out = out[: ref.span.start] + MASK + out[ref.span.end :]
    return secrets.mask_text(out)


def criteria_words(criteria: Any) -> list[str]:
    """A step's validation criteria in the engine's words: one line per rule, each conditional
    rule with its condition (as the agent is told them, the context aside)."""
    try:
        return describe_criteria(criteria)
    except InvalidCriteria:  # drawn anyway: `workrail validate` says what is wrong
        return ["criteria that are not valid"]


def _step_panel(workflow: Mapping[str, Any]) -> list[dict[str, Any]]:
    secrets = SecretSet.from_environment(workflow.get("secrets") or [])
    panel = []
    for site in walk_steps(workflow):
        step = site.step
        kind = site.kind
        entry: dict[str, Any] = {
            "id": site.id or "?",
            "title": step.get("title") or site.id,
            "kind": {"prompt": "agent"}.get(kind, kind),
            "condition": condition_words(step.get("runCondition")),
            "in_group": bool(site.group),
        }
        if kind == "prompt":
            entry["prompt"] = _masked(str(step.get("prompt", "")), secrets)
            entry["guidance"] = [str(g) for g in step.get("guidance") or []]
            entry["confirm"] = bool(step.get("requireConfirmation"))
        elif kind == "command":
            run = step.get("run") or {}
            entry["argv"] = [_masked(str(a), secrets) for a in run.get("command") or []]
            entry["env"] = {k: _masked(str(v), secrets) for k, v in (run.get("env") or {}).items()}
            entry["cwd"] = run.get("cwd")
            entry["timeout"] = run.get("timeoutSeconds")
            retry = step.get("retry") or {}
            entry["retry"] = retry.get("maxAttempts")
            entry["on_failure"] = step.get("onFailure", "abort")
        elif kind == "loop":
            entry["loop"] = loop_words(step)
        elif kind == "parallel":
            entry["limit"] = step.get("parallelLimit")
            entry["members"] = [
                str(m.get("id")) for m in step.get("steps") or [] if isinstance(m, Mapping)
            ]
        if step.get("validationCriteria") is not None:
            entry["rules"] = criteria_words(step["validationCriteria"])
        panel.append(entry)
    return panel


async def workflow_page(
    request: Request, *, plan: Any = None, problem: str | None = None, values: Any = None
) -> Response:
    state = request.app.state
    workflow_id = request.path_params["workflow_id"]
    try:
        entry = await anyio.to_thread.run_sync(state.catalog.get, workflow_id)
    except WorkflowNotFound:
        return state.pages.page(
            request, "missing.html", code=404, nav="workflows", what=f"workflow {workflow_id}"
        )
    except InvalidWorkflow as error:  # a run's link to a workflow whose file broke since
        return state.pages.page(
            request, "missing.html", code=404, nav="workflows", what=f"valid workflow: {error}"
        )
    workflow = entry.definition
    return state.pages.page(
        request,
        "workflow.html",
        code=200 if problem is None else 400,
        nav="workflows",
        workflow=workflow,
        entry=entry,
        diagram=state.pages.markup(workflow_svg(workflow)),
        steps=_step_panel(workflow),
        fields=parameter_fields(workflow.get("parameters"), values),
        plan=plan,
        problem=problem,
    )


async def dry_run(request: Request) -> Response:
    form, refused = await request.app.state.access.checked_form(request)
    if refused is not None:
        return refused
    plan = await _with_served_workflow(request, form, request.app.state.service.plan)
    if isinstance(plan, Response):
        return plan
    return await workflow_page(request, plan=plan, values=form)


async def start_run(request: Request) -> Response:
    form, refused = await request.app.state.access.checked_form(request, starts_run=True)
    if refused is not None:
        return refused
    run_id = await _with_served_workflow(request, form, request.app.state.service.run)
    if isinstance(run_id, Response):
        return run_id
    return RedirectResponse(f"/runs/{run_id}", status_code=303)


async def _with_served_workflow(request: Request, form: Any, act: Any) -> Any:
    """``act(workflow, values, options)`` on the served (compiled) workflow, as the run tools
    and the next step get it, with the parameters from the form; a refusal is the workflow's
    page with the problem."""
    try:
        workflow = await anyio.to_thread.run_sync(
            request.app.state.catalog.served, request.path_params["workflow_id"]
        )
        values = parameters_from_form(workflow.get("parameters"), form)
        return await anyio.to_thread.run_sync(act, workflow, values, RunOptions())
    except EngineError as error:
        return await workflow_page(request, problem=_problem_text(error), values=form)
    except ValueError as error:
        return await workflow_page(request, problem=str(error), values=form)


def _problem_text(error: EngineError) -> str:
    details = (error.data or {}).get("details") if isinstance(error.data, dict) else None
    return error.message + (f": {details}" if details and details not in error.message else "")
