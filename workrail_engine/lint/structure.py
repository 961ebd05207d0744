"""Step structure: unique ids, loop bodies that name real steps, loops that can end, no nesting."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..definition.steps import StepSite
from ..diagnostics import Diagnostic, Related, Severity
from ..errors import closest
from ..serving.loop_source import body_decides
from ..text.document import WorkflowDocument
from . import edits

__all__ = ["structure_diagnostics"]


def structure_diagnostics(doc: WorkflowDocument, sites: list[StepSite]) -> list[Diagnostic]:
    return [*_duplicate_ids(doc, sites), *_loops(doc, sites)]


def _duplicate_ids(doc: WorkflowDocument, sites: list[StepSite]) -> list[Diagnostic]:
    ids = [site.id for site in sites if site.id]
    if len(set(ids)) == len(ids):  # most workflows: a set in C, no list per id
        return []
    by_id: dict[str, list[StepSite]] = defaultdict(list)
    for site in sites:
        if site.id:
            by_id[site.id].append(site)
    out = []
    for step_id, places in by_id.items():
        if len(places) < 2:
            continue
        # Every occurrence is reported, each pointing at the others: "pointing at both".
        for site in places:
            pointer = f"{site.pointer}/id"
            related = tuple(
                Related(f"{step_id!r} is also the id of this step", doc.span(f"{o.pointer}/id"))
                for o in places
                if o is not site
            )
            message = f"Duplicate step id {step_id!r} ({len(places)} steps have it); step ids must be unique in a workflow"
            out.append(
                Diagnostic(
                    "WR201", Severity.ERROR, message, pointer, doc.span(pointer), related=related
                )
            )
    return out


_NEEDS = {"while": "condition", "until": "condition", "for": "count", "forEach": "items"}
_PLACEHOLDERS: dict[str, Any] = {
    "condition": {"var": "done", "equals": True},
    "count": 1,
    "items": [],
}


def _loops(doc: WorkflowDocument, sites: list[StepSite]) -> list[Diagnostic]:
    ids = {site.id: site for site in sites if site.id}
    steps = doc.value.get("steps") if isinstance(doc.value, dict) else None
    top_level = steps if isinstance(steps, list) else []
    out = []
    for site in sites:
        if site.kind != "loop":
            continue
        if site.loop is not None:
            out.append(
                _nested(
                    doc,
                    site,
                    f"{site.pointer}/type",
                    "This loop is inside another loop's body; loops do not nest",
                )
            )
        loop = site.step.get("loop")
        if isinstance(loop, dict):
            out.extend(_loop_settings(doc, site, loop, top_level))
        body = site.step.get("body")
        if isinstance(body, str):
            out.extend(_body_reference(doc, site, body, ids))
    return out


def _loop_settings(
    doc: WorkflowDocument, site: StepSite, loop: dict[str, Any], steps: list[Any]
) -> list[Diagnostic]:
    loop_type = loop.get("type")
    needed = _NEEDS.get(loop_type) if isinstance(loop_type, str) else None
    if needed is None or needed in loop or not isinstance(loop_type, str):
        return []
    if needed == "condition" and ("conditionSource" in loop or body_decides(site.step, steps)):
        return []  # upstream's artifact-driven (or context-variable) decision stands in for it
    code = "WR203" if needed == "condition" else "WR205"
    article = "An" if loop_type[0] in "aeiou" else "A"
    message = f"{article} {loop_type!r} loop needs a {needed!r}"
    if needed == "condition":
        message += " to know when to stop"
    pointer = f"{site.pointer}/loop"
    fix = edits.insert_property(doc, pointer, needed, _PLACEHOLDERS[needed])
    return [
        Diagnostic(
            code,
            Severity.ERROR,
            message,
            pointer,
            doc.opening_span(pointer),
            fixes=(fix,) if fix else (),
            data={"property": needed},
        )
    ]


def _body_reference(
    doc: WorkflowDocument, site: StepSite, body: str, ids: dict[str, StepSite]
) -> list[Diagnostic]:
    pointer = f"{site.pointer}/body"
    target = ids.get(body)
    if target is None:
        suggestions = closest(body, ids)
        hint = f"; did you mean {suggestions[0]!r}?" if suggestions else ""
        message = f"Loop body {body!r} names no step of this workflow{hint}"
        return [
            Diagnostic(
                "WR202",
                Severity.ERROR,
                message,
                pointer,
                doc.span(pointer),
                data={"closest": suggestions},
            )
        ]
    if target.kind == "loop":
        return [
            _nested(doc, site, pointer, f"Loop body {body!r} is itself a loop; loops do not nest")
        ]
    if target.pointer == site.pointer:
        return [_nested(doc, site, pointer, "A loop cannot be its own body")]
    return []


def _nested(doc: WorkflowDocument, site: StepSite, pointer: str, message: str) -> Diagnostic:
    return Diagnostic("WR204", Severity.ERROR, message, pointer, doc.span(pointer))
