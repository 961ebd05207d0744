"""Per-step findings, cached by step identity so an edit re-checks only the step it touched.

Checks that depend on one step alone (conditions and criteria, command settings, which template
references and literals its strings hold) produce ``Finding``s with pointers relative to the step.
A document made by ``WorkflowDocument.with_edit`` keeps the unchanged steps' objects, so their
findings are reused as they are; only placing them in the text (a span look-up) is done again.
"""

from __future__ import annotations

from typing import Any

from ..definition.steps import StepSite
from ..evaluation.templates import find_templates
from .commands import command_findings
from .expressions import expression_findings
from .references import is_rendered, template_strings
from .shell_scripts import check_scripts, shell_script_findings, shell_scripts
from .step_finding import StepFindings

__all__ = ["step_findings"]


def step_findings(
    sites: list[StepSite], cache: dict[int, tuple[Any, StepFindings]]
) -> list[StepFindings]:
    """Findings for every site, from ``cache`` where the step object is the same; prunes the cache."""

    def compute(site: StepSite) -> StepFindings:
        reads: list[tuple[str, str]] = []
        findings = (
            *expression_findings(site.step, site.kind, reads),
            *command_findings(site.step, site.kind),
            *(shell_script_findings(site.step, site.kind) if site.kind == "command" else ()),
        )
        templates = []
        for pointer, text in template_strings(site.step):
            refs, literals = find_templates(text)
            templates.append(
                (pointer, tuple(refs), tuple(literals) if is_rendered(pointer) else ())
            )
        return StepFindings(findings, tuple(templates), tuple(reads))

    # The scripts of the steps to check, to ShellCheck in one batch (a process per step would
    # cost ~50 ms each); the steps then find their results in its cache.
    check_scripts(
        (dialect, script)
        for site in sites
        if site.kind == "command" and _changed(site, cache)
        for _, dialect, script in shell_scripts(site.step, site.kind)
    )
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


def _changed(site: StepSite, cache: dict[int, tuple[Any, StepFindings]]) -> bool:
    hit = cache.get(id(site.step))
    return hit is None or hit[0] is not site.step
