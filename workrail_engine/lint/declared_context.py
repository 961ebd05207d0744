"""Declared context (a workflow's top-level `context`): what reads and compares it.

Only for a workflow that declares `context` at all; upstream's files, which never do, are left to
WR308's inference.

- WR309: a condition, a `{{context.X}}` / `{{X}}` template, or a step's `sets`/`reads` names a
  variable that is not declared (nor a loop's `iterationVar`/`itemVar`/`indexVar`).
- WR411: an `equals`, `not_equals` or `in` operand outside the declared `enum` of the variable it
  compares, judged with the evaluator's lenient equality: that comparison can never hold (or,
  `not_equals`, always does) — the author meant another value.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ..definition.declared import declared_context
from ..definition.steps import StepSite
from ..diagnostics import Diagnostic, Severity
from ..evaluation.conditions import lenient_equal
from ..text.document import WorkflowDocument
from .step_finding import StepFindings
from .strings import StringSpans, value_at

__all__ = ["UNDECLARED_VARIABLE", "VALUE_OUTSIDE_ENUM", "context_diagnostics"]

UNDECLARED_VARIABLE = "WR309"
VALUE_OUTSIDE_ENUM = "WR411"

# the operators whose operand is a value of the variable (`in`: a list of them)
_COMPARED = ("equals", "not_equals")


def context_diagnostics(
    doc: WorkflowDocument, sites: list[StepSite], found: list[StepFindings]
) -> list[Diagnostic]:
    declared = declared_context(doc.value)
    if declared is None:
        return []
    known: set[str] = set(declared)
    for site in sites:
        # the kind first: an isinstance of Mapping costs a call into ABCMeta, for every step
        if site.kind == "loop" and isinstance(spec := site.step.get("loop"), Mapping):
            known.update(
                v
                for k in ("iterationVar", "itemVar", "indexVar")
                if isinstance(v := spec.get(k), str)
            )
    out: list[Diagnostic] = []
    for site, step_found in zip(sites, found, strict=False):
        out += _undeclared_names(doc, site, known)
        for relative, var in step_found.reads:
            name = _context_name(var)
            if name is None:
                continue
            pointer = site.pointer + relative
            if name not in known:
                out.append(_undeclared(doc, pointer, name, "This condition reads"))
            elif name == var.removeprefix("context.") and name in declared:
                out += _outside_enum(doc, site.step, relative, site.pointer, name, declared[name])
        for relative, refs, _ in step_found.templates:
            spans = None
            for ref in refs:
                if ref.namespace != "context" or not ref.path or ref.path[0] in known:
                    continue
                pointer = site.pointer + relative
                spans = spans or StringSpans(doc, pointer)
                message = _undeclared_message(ref.path[0], f"{{{{{ref.text}}}}} reads")
                span = spans.span(ref.span.start, ref.span.end)
                out.append(
                    Diagnostic(UNDECLARED_VARIABLE, Severity.WARNING, message, pointer, span)
                )
    return out


def _context_name(var: str) -> str | None:
    head, _, rest = var.partition(".")
    if head in ("parameters", "steps"):
        return None
    name = rest.partition(".")[0] if head == "context" else head
    return name or None


def _undeclared_names(
    doc: WorkflowDocument, site: StepSite, known: set[Any]
) -> Iterator[Diagnostic]:
    for key in ("sets", "reads"):
        names = site.step.get(key)
        for index, name in enumerate(names if isinstance(names, list) else ()):
            if isinstance(name, str) and name not in known:
                pointer = f"{site.pointer}/{key}/{index}"
                yield _undeclared(doc, pointer, name, f"This step's {key!r} names")


def _undeclared(doc: WorkflowDocument, pointer: str, name: str, what: str) -> Diagnostic:
    message = _undeclared_message(name, what)
    return Diagnostic(UNDECLARED_VARIABLE, Severity.WARNING, message, pointer, doc.span(pointer))


def _undeclared_message(name: str, what: str) -> str:
    return (
        f"{what} the context variable {name!r}, which the workflow's 'context' does not declare: "
        f'declare it ("context": {{"{name}": {{"type": "string"}}}}) or fix the name'
    )


def _outside_enum(
    doc: WorkflowDocument,
    step: Mapping[str, Any],
    var_pointer: str,
    step_pointer: str,
    name: str,
    schema: Mapping[str, Any],
) -> Iterator[Diagnostic]:
    allowed = schema.get("enum")
    if not isinstance(allowed, list):
        return
    comparison_pointer = var_pointer.removesuffix("/var")
    comparison = value_at(step, comparison_pointer)
    if not isinstance(comparison, Mapping):
        return
    operands: list[tuple[str, Any]] = [
        (f"{comparison_pointer}/{op}", comparison[op]) for op in _COMPARED if op in comparison
    ]
    listed = comparison.get("in")
    if isinstance(listed, list):
        operands += [(f"{comparison_pointer}/in/{i}", item) for i, item in enumerate(listed)]
    for relative, operand in operands:
        if any(lenient_equal(operand, value) for value in allowed):
            continue
        pointer = step_pointer + relative
        shown = ", ".join(_json(value) for value in allowed)
        message = (
            f"{_json(operand)} is not an allowed value of {name!r} (its enum: {shown}), so this "
            "comparison never matches: use one of those values, or add it to the enum"
        )
        yield Diagnostic(VALUE_OUTSIDE_ENUM, Severity.ERROR, message, pointer, doc.span(pointer))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
