"""Per-step findings, cached by step identity so an edit re-checks only the step it touched.

Checks that depend on one step alone (conditions and criteria, command settings, which template
references and literals its strings hold) produce ``Finding``s with pointers relative to the step.
A document made by ``WorkflowDocument.with_edit`` keeps the unchanged steps' objects, so their
findings are reused as they are; only placing them in the text (a span look-up) is done again.

Across the files of one batch (`workrail validate DIR`), steps are also reused by content
(`StepsByContent`): the same step copied into many workflows is checked once.
"""

from __future__ import annotations

from typing import Any

from ..content_key import content_key
from ..definition.steps import StepSite
from ..evaluation.templates import find_templates
from .commands import command_findings
from .expressions import expression_findings
from .references import is_rendered, template_strings
from .shell_scripts import check_scripts, shell_script_findings, shell_scripts
from .step_finding import StepFindings

__all__ = ["StepsByContent", "step_findings"]

# A step's kind and `content_key` → its findings.
StepsByContent = dict[tuple[str, bytes], StepFindings]


def step_findings(
    sites: list[StepSite],
    cache: dict[int, tuple[Any, StepFindings]],
    by_content: StepsByContent | None = None,
) -> list[StepFindings]:
    """Findings for every site, from ``cache`` where the step object is the same; prunes the cache.

    ``by_content``: findings of steps checked before, by content, shared by the documents of a
    batch; the steps checked here are added to it. The findings of a step are a function of its
    kind and its value alone.
    """

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

    results: list[StepFindings | None] = []
    keys: list[tuple[str, bytes] | None] = []
    for site in sites:
        hit = cache.get(id(site.step))
        # The cache holds the step itself, so its id cannot be reused while the entry lives.
        found = hit[1] if hit is not None and hit[0] is site.step else None
        key = None
        if found is None and by_content is not None:
            key = _content_key(site)
            found = by_content.get(key) if key is not None else None
        results.append(found)
        keys.append(key)
    # The scripts of the steps to check, to ShellCheck in one batch (a process per step would
    # cost ~50 ms each); the steps then find their results in its cache.
    check_scripts(
        (dialect, script)
        for site, found in zip(sites, results, strict=True)
        if site.kind == "command" and found is None
        for _, dialect, script in shell_scripts(site.step, site.kind)
    )
    cache.clear()
    checked = []
    for site, found, key in zip(sites, results, keys, strict=True):
        if found is None:
            found = compute(site)
            if key is not None and by_content is not None:
                by_content[key] = found
        cache[id(site.step)] = (site.step, found)
        checked.append(found)
    return checked


def _content_key(site: StepSite) -> tuple[str, bytes] | None:
    key = content_key(site.step)
    return None if key is None else (site.kind, key)
