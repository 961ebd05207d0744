"""Checks of the constructs that came from upstream WorkRail 3.x: what their names refer to.

- WR206: a parallel group holds either `steps` (our command groups) or `parallelDelegations`
  (upstream's agent delegation), never both.
- WR701: each `functionReferences` entry (`"name()"`) names a function defined by the workflow,
  the enclosing loop or the step itself — in `functionDefinitions`, or, as upstream 0.x workflows
  do, in a `metaGuidance` line that starts with `name():`.
- WR702: each `assessmentRefs` entry (and `assessmentConsequences[].when.forAssessment`) names
  one of the workflow's `assessments`.
- WR704: `promptFragments` ids are unique within their step.
- WR705: an `outputContract.contractRef` (or a loop's artifact `conditionSource`) names a
  contract upstream defines.
- WR706, WR707: `references` ids and `assessments` ids are unique in the workflow.
- WR708: an `assessmentConsequences[].when.anyEqualsLevel` is a level of a dimension of the
  assessment it watches (`forAssessment`, else any of the step's `assessmentRefs`).
- WR710 (in one file): a parallel delegation to the workflow itself.

WR703 (a `templateCall` names a routine that exists) and WR709 (a delegation names a workflow
that exists) need the catalog, and a delegation cycle through other workflows (WR710) needs their
files, so these are cross-file checks: :func:`template_call_diagnostics`,
:func:`delegation_diagnostics`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from ..definition.routine_templates import ROUTINE_TEMPLATE_PREFIX, routine_ids_for
from ..definition.steps import StepSite
from ..diagnostics import Diagnostic, Severity
from ..errors import closest
from ..text.document import WorkflowDocument

__all__ = [
    "KNOWN_CONTRACTS",
    "delegation_diagnostics",
    "refers_to_workflows",
    "template_call_diagnostics",
    "upstream_diagnostics",
]

# The artifact contracts upstream WorkRail 3.x defines (src/v2/durable-core/schemas/artifacts).
KNOWN_CONTRACTS = (
    "wr.contracts.assessment",
    "wr.contracts.coding_handoff",
    "wr.contracts.coordinator_signal",
    "wr.contracts.differentiation_handoff",
    "wr.contracts.discovery_handoff",
    "wr.contracts.gate_verdict",
    "wr.contracts.loop_control",
    "wr.contracts.review_verdict",
    "wr.contracts.shaping_handoff",
)


def upstream_diagnostics(doc: WorkflowDocument, sites: list[StepSite]) -> list[Diagnostic]:
    workflow = doc.value
    if not isinstance(workflow, Mapping):
        return []
    by_pointer = {site.pointer: site.step for site in sites if site.kind == "loop"}
    workflow_functions = _function_names(workflow.get("functionDefinitions")) | _guidance_functions(
        workflow.get("metaGuidance")
    )
    assessments = {
        a["id"]
        for a in _list(workflow.get("assessments"))
        if isinstance(a, Mapping) and isinstance(a.get("id"), str)
    }
    by_assessment = {
        a["id"]: a
        for a in _list(workflow.get("assessments"))
        if isinstance(a, Mapping) and isinstance(a.get("id"), str)
    }
    out: list[Diagnostic] = [
        *_repeated_ids(doc, "references", "WR706", "Reference"),
        *_repeated_ids(doc, "assessments", "WR707", "Assessment"),
    ]
    own_id = workflow.get("id")
    for site in sites:
        step = site.step
        # Most steps hold none of these keys; the editor runs this on every keystroke over
        # thousands of steps, so the checks below start only where there is something to check.
        if _UPSTREAM_KEYS.isdisjoint(step):
            continue
        if site.kind == "parallel" and "steps" in step and "parallelDelegations" in step:
            out.append(_mixed_group(doc, site))
        if "functionReferences" in step:
            loop_functions = (
                _function_names(by_pointer[site.loop].get("functionDefinitions"))
                if site.loop in by_pointer
                else set()
            )
            functions = (
                workflow_functions
                | loop_functions
                | _function_names(step.get("functionDefinitions"))
            )
            out += _function_references(doc, site, functions)
        out += _assessment_refs(doc, site, assessments)
        out += _consequence_levels(doc, site, by_assessment)
        out += _self_delegations(doc, site, own_id)
        out += _fragment_ids(doc, site)
        out += _contracts(doc, site)
    return out


# The keys some check below reads; a step without any of them has nothing to report here.
_UPSTREAM_KEYS = frozenset(
    {
        "parallelDelegations",
        "functionReferences",
        "assessmentRefs",
        "assessmentConsequences",
        "promptFragments",
        "outputContract",
        "synthesis",
        "loop",
    }
)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _function_names(definitions: Any) -> set[str]:
    return {
        d["name"]
        for d in _list(definitions)
        if isinstance(d, Mapping) and isinstance(d.get("name"), str)
    }


# "initReviewDoc(): create the review document…" — a function defined in prose (upstream 0.8).
_PROSE_DEFINITION = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\(\)")


def _guidance_functions(lines: Any) -> set[str]:
    return {
        match.group(1)
        for line in _list(lines)
        if isinstance(line, str) and (match := _PROSE_DEFINITION.match(line))
    }


def _error(doc: WorkflowDocument, code: str, message: str, pointer: str, **data: Any) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, pointer, doc.span(pointer), data=data)


def _hint(name: str, known: Iterable[str]) -> str:
    suggestions = closest(name, list(known), n=1)
    return f"; did you mean {suggestions[0]!r}?" if suggestions else ""


def _mixed_group(doc: WorkflowDocument, site: StepSite) -> Diagnostic:
    pointer = f"{site.pointer}/steps"
    message = (
        "A parallel group holds either 'steps' (prompt or command steps run at the same time) or "
        "'parallelDelegations' (work handed to sub-agents), not both; split it into two groups"
    )
    span = doc.key_span(pointer) or doc.span(pointer)
    return Diagnostic("WR206", Severity.ERROR, message, pointer, span)


def _function_references(
    doc: WorkflowDocument, site: StepSite, functions: set[str]
) -> list[Diagnostic]:
    out = []
    for index, reference in enumerate(_list(site.step.get("functionReferences"))):
        if not isinstance(reference, str) or not reference.endswith("()"):
            continue  # the schema reports the shape
        name = reference[:-2]
        if name in functions:
            continue
        where = "; define it in functionDefinitions" if not functions else _hint(name, functions)
        message = f"Function reference {reference!r} names no defined function{where}"
        pointer = f"{site.pointer}/functionReferences/{index}"
        out.append(_error(doc, "WR701", message, pointer, function=name))
    return out


def _assessment_refs(
    doc: WorkflowDocument, site: StepSite, assessments: set[str]
) -> list[Diagnostic]:
    named = [
        (f"{site.pointer}/assessmentRefs/{i}", ref)
        for i, ref in enumerate(_list(site.step.get("assessmentRefs")))
        if isinstance(ref, str)
    ]
    for i, consequence in enumerate(_list(site.step.get("assessmentConsequences"))):
        when = consequence.get("when") if isinstance(consequence, Mapping) else None
        if isinstance(when, Mapping) and isinstance(when.get("forAssessment"), str):
            pointer = f"{site.pointer}/assessmentConsequences/{i}/when/forAssessment"
            named.append((pointer, when["forAssessment"]))
    out = []
    for pointer, ref in named:
        if ref in assessments:
            continue
        where = (
            "; define it in the workflow's assessments"
            if not assessments
            else _hint(ref, assessments)
        )
        message = f"Assessment {ref!r} is not one of the workflow's assessments{where}"
        out.append(_error(doc, "WR702", message, pointer, assessment=ref))
    return out


def _repeated_ids(doc: WorkflowDocument, key: str, code: str, noun: str) -> list[Diagnostic]:
    """``code`` on each repeat of an id among the workflow's ``key`` (the first one stands)."""
    places: dict[str, list[int]] = defaultdict(list)
    value = doc.value if isinstance(doc.value, Mapping) else {}
    for index, item in enumerate(_list(value.get(key))):
        if isinstance(item, Mapping) and isinstance(item.get("id"), str):
            places[item["id"]].append(index)
    out = []
    for item_id, indexes in places.items():
        for index in indexes[1:]:
            message = (
                f"{noun} id {item_id!r} is used {len(indexes)} times in {key}; ids must be unique"
            )
            out.append(_error(doc, code, message, f"/{key}/{index}/id", id=item_id))
    return out


def _levels(assessment: Any) -> set[str]:
    """Its dimensions' levels, compared as the check of an artifact compares them."""
    dimensions = _list(assessment.get("dimensions")) if isinstance(assessment, Mapping) else []
    return {
        str(level).strip().lower()
        for dim in dimensions
        if isinstance(dim, Mapping)
        for level in _list(dim.get("levels"))
    }


def _consequence_levels(
    doc: WorkflowDocument, site: StepSite, by_assessment: Mapping[str, Any]
) -> list[Diagnostic]:
    refs = [r for r in _list(site.step.get("assessmentRefs")) if isinstance(r, str)]
    out = []
    for i, consequence in enumerate(_list(site.step.get("assessmentConsequences"))):
        when = consequence.get("when") if isinstance(consequence, Mapping) else None
        if not isinstance(when, Mapping) or not isinstance(when.get("anyEqualsLevel"), str):
            continue
        level: str = when["anyEqualsLevel"]
        target = when.get("forAssessment")
        watched = [target] if isinstance(target, str) else refs
        known = [by_assessment[a] for a in watched if a in by_assessment]
        if not known:
            continue  # WR702 (or the schema) reports what the consequence watches
        levels = set().union(*(_levels(a) for a in known))
        if level.strip().lower() in levels:
            continue
        names = ", ".join(repr(a.get("id")) for a in known)
        message = (
            f"anyEqualsLevel {level!r} is no level of {names}, so this consequence never applies"
            f"{_hint(level, sorted(levels))}"
        )
        pointer = f"{site.pointer}/assessmentConsequences/{i}/when/anyEqualsLevel"
        out.append(_error(doc, "WR708", message, pointer, level=level))
    return out


def _delegated(step: Mapping[str, Any]) -> list[tuple[int, str]]:
    return [
        (index, d["workflowId"])
        for index, d in enumerate(_list(step.get("parallelDelegations")))
        if isinstance(d, Mapping) and isinstance(d.get("workflowId"), str)
    ]


def _self_delegations(doc: WorkflowDocument, site: StepSite, own_id: Any) -> list[Diagnostic]:
    return [
        _error(
            doc,
            "WR710",
            f"This step delegates to {target!r}, the workflow itself: a sub-agent would start it "
            "again, without end",
            f"{site.pointer}/parallelDelegations/{index}/workflowId",
            cycle=[target, target],
        )
        for index, target in _delegated(site.step)
        if target == own_id
    ]


def _fragment_ids(doc: WorkflowDocument, site: StepSite) -> list[Diagnostic]:
    places: dict[str, list[int]] = defaultdict(list)
    for index, fragment in enumerate(_list(site.step.get("promptFragments"))):
        if isinstance(fragment, Mapping) and isinstance(fragment.get("id"), str):
            places[fragment["id"]].append(index)
    out = []
    for fragment_id, indexes in places.items():
        for index in indexes[1:]:
            pointer = f"{site.pointer}/promptFragments/{index}/id"
            message = (
                f"Prompt fragment id {fragment_id!r} is used {len(indexes)} times in this step; "
                "fragment ids must be unique within a step"
            )
            out.append(_error(doc, "WR704", message, pointer, fragment=fragment_id))
    return out


def _contracts(doc: WorkflowDocument, site: StepSite) -> list[Diagnostic]:
    step = site.step
    named = []
    for relative, holder in (
        ("/outputContract", step.get("outputContract")),
        (
            "/synthesis/outputContract",
            (step.get("synthesis") or {}).get("outputContract")
            if isinstance(step.get("synthesis"), Mapping)
            else None,
        ),
        (
            "/loop/conditionSource",
            (step.get("loop") or {}).get("conditionSource")
            if isinstance(step.get("loop"), Mapping)
            else None,
        ),
    ):
        if isinstance(holder, Mapping) and isinstance(holder.get("contractRef"), str):
            named.append((f"{site.pointer}{relative}/contractRef", holder["contractRef"]))
    out = []
    for pointer, ref in named:
        if ref in KNOWN_CONTRACTS:
            continue
        message = f"Unknown output contract {ref!r}{_hint(ref, KNOWN_CONTRACTS) or '; known: ' + ', '.join(KNOWN_CONTRACTS)}"
        out.append(_error(doc, "WR705", message, pointer, contract=ref))
    return out


def template_call_diagnostics(
    documents: Iterable[WorkflowDocument], known_ids: Iterable[str]
) -> dict[str, list[Diagnostic]]:
    """WR703 for each `templateCall` naming no routine among ``known_ids``, keyed by path.

    ``known_ids`` are the workflow ids the caller can see: the catalog's, plus the files checked
    together (a routine and the workflow calling it are often checked in one run).
    """
    known = set(known_ids)
    out: dict[str, list[Diagnostic]] = defaultdict(list)
    for doc in documents:
        for site in doc.step_sites:
            call = site.step.get("templateCall")
            if call is None or not isinstance(call, Mapping):  # None first: most steps, cheap
                continue
            if not isinstance(call.get("templateId"), str):
                continue
            template_id = call["templateId"]
            candidates = routine_ids_for(template_id)
            if any(c in known for c in candidates):
                continue
            pointer = f"{site.pointer}/templateCall/templateId"
            if not candidates:
                message = (
                    f"Unknown template {template_id!r}: templates are routines, named "
                    f"'{ROUTINE_TEMPLATE_PREFIX}NAME'"
                )
            else:
                routines = ", ".join(repr(c) for c in candidates)
                message = f"Template {template_id!r} names no routine of the catalog (looked for {routines})"
            out[doc.path or ""].append(
                Diagnostic(
                    "WR703",
                    Severity.ERROR,
                    message,
                    pointer,
                    doc.span(pointer),
                    data={"template": template_id, "routines": candidates},
                )
            )
    return dict(out)


def refers_to_workflows(doc: WorkflowDocument) -> bool:
    """Whether a step of the document calls a template or delegates to a workflow (what
    `template_call_diagnostics` and `delegation_diagnostics` look at)."""
    return any(
        site.step.get("templateCall") is not None or _delegated(site.step)
        for site in doc.step_sites
    )


def delegation_diagnostics(
    documents: Iterable[WorkflowDocument], known_ids: Iterable[str] | None = None
) -> dict[str, list[Diagnostic]]:
    """WR709 for each delegation naming none of ``known_ids`` (when given), and WR710 for each
    delegation that leads back to its own workflow through the ``documents`` (a cycle of two or
    more; a workflow delegating to itself is WR710 of the file alone), keyed by path."""
    documents = list(documents)
    sites = {
        doc.path or "": [
            (site.pointer, index, target)
            for site in doc.step_sites
            for index, target in _delegated(site.step)
        ]
        for doc in documents
    }
    graph: dict[str, set[str]] = defaultdict(set)
    ids: dict[str, str] = {}
    for doc in documents:
        own = doc.value.get("id") if isinstance(doc.value, Mapping) else None
        if isinstance(own, str):
            ids[doc.path or ""] = own
            graph[own] |= {target for _, _, target in sites[doc.path or ""]}
    known = None if known_ids is None else {*known_ids, *ids.values()}
    out: dict[str, list[Diagnostic]] = defaultdict(list)
    for doc in documents:
        own = ids.get(doc.path or "")
        for pointer, index, target in sites[doc.path or ""]:
            where = f"{pointer}/parallelDelegations/{index}/workflowId"
            if known is not None and target not in known:
                message = f"This step delegates to {target!r}, which no workflow of the catalog has as its id{_hint(target, known)}"
                out[doc.path or ""].append(_error(doc, "WR709", message, where, workflow=target))
                continue
            path = _path(graph, target, own) if own and target != own else None
            if own and path:
                shown = " → ".join([own, *path])
                message = f"Delegation cycle: {shown}; a sub-agent would start this workflow again"
                out[doc.path or ""].append(_error(doc, "WR710", message, where, cycle=[own, *path]))
    return dict(out)


def _path(graph: Mapping[str, set[str]], start: str, goal: str) -> list[str] | None:
    """The delegations from ``start`` to ``goal`` (both included), breadth first, if any."""
    parents: dict[str, str | None] = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        if node == goal:
            path = [node]
            while parents[path[-1]] is not None:
                path.append(parents[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for following in sorted(graph.get(node, ())):
            if following not in parents:
                parents[following] = node
                queue.append(following)
    return None
