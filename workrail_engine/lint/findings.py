"""Per-step findings, cached by step identity so an edit re-checks only the step it touched.

Checks that depend on one step alone (conditions and criteria, command settings, which template
references its strings hold) produce ``Finding``s with pointers relative to the step. A document
made by ``WorkflowDocument.with_edit`` keeps the unchanged steps' objects, so their findings are
reused as they are; only placing them in the text (a span look-up) is done again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..document import WorkflowDocument
from ..steps import StepSite
from ..templates import TemplateRef, find_references

__all__ = ["Finding", "StepFindings", "step_findings"]


@dataclass(frozen=True, slots=True)
class Finding:
    pointer: str  # relative to the step
    code: str
    severity: Severity
    message: str
    data: dict[str, Any] = field(default_factory=dict)
    on_key: bool = False  # shown on the key (or the object's brace) rather than the value

    def place(self, doc: WorkflowDocument, step_pointer: str) -> Diagnostic:
        pointer = step_pointer + self.pointer
        span = doc.opening_span(pointer) if self.on_key else doc.span(pointer)
        return Diagnostic(self.code, self.severity, self.message, pointer, span, data=self.data)


@dataclass(frozen=True, slots=True)
class StepFindings:
    findings: tuple[Finding, ...]
    # (pointer relative to the step, the string, the references in it)
    templates: tuple[tuple[str, str, tuple[TemplateRef, ...]], ...]


def step_findings(
    sites: list[StepSite], cache: dict[int, tuple[Any, StepFindings]]
) -> list[StepFindings]:
    """Findings for every site, from ``cache`` where the step object is the same; prunes the cache."""
    # Imported here: these modules build Findings, so they import this one.
    from .commands import command_findings
    from .expressions import expression_findings
    from .references import template_strings

    def compute(site: StepSite) -> StepFindings:
        findings = (
            *expression_findings(site.step, site.kind),
            *command_findings(site.step, site.kind),
        )
        templates = tuple(
            (pointer, text, tuple(find_references(text)))
            for pointer, text in template_strings(site.step)
        )
        return StepFindings(findings, templates)

    results = []
    fresh: dict[int, tuple[Any, StepFindings]] = {}
    for site in sites:
        key = id(site.step)
        hit = cache.get(key)
        # The cache holds the step itself, so its id cannot be reused while the entry lives.
        found = hit[1] if hit is not None and hit[0] is site.step else compute(site)
        fresh[key] = (site.step, found)
        results.append(found)
    cache.clear()
    cache.update(fresh)
    return results
