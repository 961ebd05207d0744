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


class _Checked:
    """A step checked before, its findings, and its content key once one was needed."""

    __slots__ = ("findings", "key", "step")

    def __init__(self, step: Any, findings: StepFindings, key: bytes | None) -> None:
        self.step = step
        self.findings = findings
        self.key = key  # None: not made yet


class StepsByContent:
    """The findings of the steps checked before in a batch, found again by a step's kind and
    content (`content_key`, a serialization of the whole step).

    A step with a prompt is serialized only when a step checked before has the same prompt:
    steps of unrelated workflows differ there, and serializing each of them cost 3 % of
    `workrail validate` on 1,000 files. Other steps (loops, groups, commands) are found by
    their key alone.
    """

    __slots__ = ("_by_key", "_by_prompt")

    def __init__(self) -> None:
        self._by_prompt: dict[tuple[str, str], list[_Checked]] = {}
        self._by_key: dict[tuple[str, bytes], StepFindings] = {}

    def get(self, site: StepSite) -> tuple[StepFindings | None, bytes | None]:
        """The findings of a step checked before of the site's kind and content, if any, and
        the site's content key when it was made (for `add`)."""
        step = site.step
        prompt = step.get("prompt")
        if type(prompt) is not str:
            key = content_key(step)
            return (None if key is None else self._by_key.get((site.kind, key))), key
        alike = self._by_prompt.get((site.kind, prompt))
        if alike is None:
            return None, None
        key = content_key(step)
        if key is not None:
            for checked in alike:
                if checked.key is None:
                    checked.key = content_key(checked.step) or b""  # b"": none, equal to none
                if checked.key == key:
                    return checked.findings, key
        return None, key

    def add(self, site: StepSite, findings: StepFindings, key: bytes | None) -> None:
        """Remember the findings of the site's step, which `get` did not have; ``key``: what
        `get` made of it."""
        step = site.step
        prompt = step.get("prompt")
        if type(prompt) is str:
            if type(step) is dict:  # the type content_key makes keys of
                checked = _Checked(step, findings, key)
                self._by_prompt.setdefault((site.kind, prompt), []).append(checked)
        elif key is not None:
            self._by_key[site.kind, key] = findings


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
    keys: list[bytes | None] = []
    for site in sites:
        hit = cache.get(id(site.step))
        # The cache holds the step itself, so its id cannot be reused while the entry lives.
        found = hit[1] if hit is not None and hit[0] is site.step else None
        key = None
        if found is None and by_content is not None:
            found, key = by_content.get(site)
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
            if by_content is not None:
                by_content.add(site, found, key)
        cache[id(site.step)] = (site.step, found)
        checked.append(found)
    return checked
