"""Conditions and validation criteria: operand types, regexes RE2 accepts, embedded schemas.

The checks themselves live with the evaluators (``conditions``, ``rules``) so that what lint
accepts is exactly what will run; this module only places their findings in the document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..conditions import MALFORMED, condition_problems
from ..diagnostics import Diagnostic, Severity
from ..document import WorkflowDocument
from ..rules import criteria_problems
from ..steps import StepSite

__all__ = ["expression_diagnostics"]


def expression_diagnostics(doc: WorkflowDocument, sites: list[StepSite]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for site in sites:
        step = site.step
        if isinstance(step.get("runCondition"), Mapping):
            out.extend(_place(doc, f"{site.pointer}/runCondition", condition_problems(step["runCondition"])))
        loop = step.get("loop")
        if site.kind == "loop" and isinstance(loop, Mapping) and isinstance(loop.get("condition"), Mapping):
            out.extend(_place(doc, f"{site.pointer}/loop/condition", condition_problems(loop["condition"])))
        if "validationCriteria" in step:
            out.extend(_place(doc, f"{site.pointer}/validationCriteria", criteria_problems(step["validationCriteria"])))
    return out


def _place(doc: WorkflowDocument, base: str, problems: Iterable[object]) -> list[Diagnostic]:
    out = []
    for problem in problems:
        if problem.code == MALFORMED:  # type: ignore[attr-defined]
            continue  # the schema already reports the shape, on the exact key
        pointer = base + problem.pointer  # type: ignore[attr-defined]
        out.append(Diagnostic(problem.code, Severity.ERROR, problem.message, pointer, doc.span(pointer)))  # type: ignore[attr-defined]
    return out
