"""Template references: to steps that exist and come earlier, to declared parameters and secrets."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from ..definition.declared import declared_parameters, declared_secrets
from ..definition.steps import StepSite
from ..diagnostics import Diagnostic, Severity
from ..errors import closest
from ..evaluation.templates import NAMESPACES, TemplateLiteral, TemplateRef
from ..text.document import WorkflowDocument
from ..text.json_pointer import escape_token
from .step_finding import StepFindings
from .strings import StringSpans

__all__ = ["is_rendered", "reference_diagnostics", "template_strings"]


def template_strings(step: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(pointer relative to the step, text) of every string holding ``{{`` where templates apply."""
    for key in ("prompt", "title"):
        text = step.get(key)
        if isinstance(text, str) and "{{" in text:
            yield f"/{key}", text
    if isinstance(step.get("guidance"), list):
        for index, line in enumerate(step["guidance"]):
            if isinstance(line, str) and "{{" in line:
                yield f"/guidance/{index}", line
    run = step.get("run")
    if run is not None and isinstance(run, Mapping):  # None first: most steps, cheap
        if isinstance(run.get("command"), list):
            for index, arg in enumerate(run["command"]):
                if isinstance(arg, str) and "{{" in arg:
                    yield f"/run/command/{index}", arg
        if isinstance(run.get("cwd"), str) and "{{" in run["cwd"]:
            yield "/run/cwd", run["cwd"]
        if isinstance(run.get("env"), Mapping):
            for name, value in run["env"].items():
                if isinstance(value, str) and "{{" in value:
                    yield f"/run/env/{escape_token(name)}", value


def reference_diagnostics(
    doc: WorkflowDocument, sites: list[StepSite], found: list[StepFindings]
) -> list[Diagnostic]:
    workflow = doc.value
    if not isinstance(workflow, Mapping):
        return []
    by_id = {site.id: site for site in sites if site.id}
    declared = {
        "parameters": set(declared_parameters(workflow)),
        "secrets": set(declared_secrets(workflow)),
    }
    out = []
    for site, step_found in zip(sites, found, strict=False):
        for relative, refs, literals in step_found.templates:
            pointer = site.pointer + relative
            spans = None
            for ref in refs:
                problem = _problem(ref, site, by_id, declared)
                if problem:
                    code, message = problem
                    spans = spans or StringSpans(doc, pointer)
                    span = spans.span(ref.span.start, ref.span.end)
                    severity = Severity.WARNING if ref.bare else Severity.ERROR
                    out.append(
                        Diagnostic(
                            code, severity, message, pointer, span, data={"reference": ref.text}
                        )
                    )
            if literals:
                spans = spans or StringSpans(doc, pointer)
                out.extend(_literal_hints(spans, pointer, literals))
    return out


def is_rendered(relative: str) -> bool:
    # Titles and guidance lines are shown as written, never rendered: braces in them mean nothing.
    return relative != "/title" and not relative.startswith("/guidance/")


def _literal_hints(
    spans: StringSpans, pointer: str, literals: tuple[TemplateLiteral, ...]
) -> list[Diagnostic]:
    out = []
    for literal in literals:
        shown = "{{" + literal.text + "}}"
        span = spans.span(literal.span.start, literal.span.end)
        head = literal.text.split(".", 1)[0].strip()
        if head in NAMESPACES and "." in literal.text:
            # {{steps.}} or {{parameters. x}}: meant as a reference, written so it cannot be one.
            message = f"{shown} is not a valid reference: write {{{{{head}.NAME}}}} with no spaces or empty parts"
            out.append(
                Diagnostic(
                    "WR305",
                    Severity.ERROR,
                    message,
                    pointer,
                    span,
                    data={"reference": literal.text},
                )
            )
            continue
        why = (
            "upstream WorkRail resolves it when it compiles the workflow"
            if literal.compile_time
            else "only {{name}}, {{name.path}} and {{namespace.path}} are references"
        )
        message = f"{shown} is not a template reference ({why}); it is kept as written"
        out.append(
            Diagnostic("WR306", Severity.INFO, message, pointer, span, data={"text": literal.text})
        )
    return out


# Bare names that read like a misspelt namespace: {{secret.TOKEN}} is most likely {{secrets.TOKEN}}.
_NEAR_NAMESPACES = {
    "secret": "secrets",
    "step": "steps",
    "parameter": "parameters",
    "param": "parameters",
    "params": "parameters",
    "ctx": "context",
}


def _problem(
    ref: TemplateRef, site: StepSite, by_id: dict[str, StepSite], declared: dict[str, set[str]]
) -> tuple[str, str] | None:
    if ref.bare:
        near = _NEAR_NAMESPACES.get(ref.path[0])
        if near and len(ref.path) > 1:
            rest = ".".join(ref.path[1:])
            return (
                "WR305",
                f"{{{{{ref.text}}}}} reads the context variable {ref.path[0]!r}; did you mean {{{{{near}.{rest}}}}}?",
            )
        return None
    if ref.namespace not in NAMESPACES:
        suggestions = closest(ref.namespace, NAMESPACES, n=1)
        hint = (
            f"; did you mean {suggestions[0]!r}?"
            if suggestions
            else f"; use one of {', '.join(NAMESPACES)}"
        )
        return "WR305", f"Unknown template namespace {ref.namespace!r} in {{{{{ref.text}}}}}{hint}"
    if not ref.path:
        return (
            "WR305",
            f"{{{{{ref.text}}}}} names a namespace but nothing in it (e.g. {{{{{ref.namespace}.NAME}}}})",
        )
    name = ref.path[0]
    if ref.namespace == "steps":
        return _step_problem(ref, name, site, by_id)
    if ref.namespace in declared and name not in declared[ref.namespace]:
        code = "WR303" if ref.namespace == "parameters" else "WR304"
        known = sorted(declared[ref.namespace])
        suggestions = closest(name, known, n=1)
        where = "`parameters.properties`" if ref.namespace == "parameters" else "`secrets`"
        hint = f"; did you mean {suggestions[0]!r}?" if suggestions else f"; declare it in {where}"
        kind = "parameter" if ref.namespace == "parameters" else "secret"
        return code, f"Undeclared {kind} {name!r} in {{{{{ref.text}}}}}{hint}"
    return None


def _step_problem(
    ref: TemplateRef, name: str, site: StepSite, by_id: dict[str, StepSite]
) -> tuple[str, str] | None:
    target = by_id.get(name)
    if target is None:
        suggestions = _closest_step_id(name, tuple(by_id))
        hint = f"; did you mean {suggestions[0]!r}?" if suggestions else ""
        return "WR301", f"{{{{{ref.text}}}}} refers to step {name!r}, which does not exist{hint}"
    same_group = (site.group is not None and site.group == target.group) or target.pointer in (
        site.group,
        site.loop,
    )
    if target is site:
        return (
            "WR302",
            f"{{{{{ref.text}}}}} refers to this step itself, whose output does not exist yet",
        )
    if target.order >= site.order or same_group:
        why = "runs at the same time as this one" if same_group else "has not run yet at this point"
        return (
            "WR302",
            f"{{{{{ref.text}}}}} refers to step {name!r}, which {why}; only earlier steps have output",
        )
    return None


@functools.lru_cache(maxsize=64)
def _closest_step_id(name: str, ids: tuple[str, ...]) -> tuple[str, ...]:
    # Ranking 2,800 ids costs ~1 ms; an editor re-lints on every keystroke, and a reference to a
    # missing step usually stays missing, among the same ids, for many keystrokes.
    return tuple(closest(name, ids, n=1))
