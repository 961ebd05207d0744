"""``{{ namespace.path }}`` references in prompts and argv elements.

A reference is an identifier dot-path inside double braces. ``{{parameters.x}}``,
``{{context.x}}``, ``{{steps.ID.output}}`` and ``{{secrets.NAME}}`` name their namespace; a bare
``{{name}}`` or ``{{name.path}}`` is a context variable, as upstream WorkRail renders it (so
``{{currentItem}}`` is ``{{context.currentItem}}``) when written tight, as upstream requires:
``{{ name }}`` stays as written, while ``{{ context.name }}`` is a reference. Anything else inside ``{{ }}`` — Mermaid's
``A{{"label"}}``, a JavaScript expression ``{{(a / b).toFixed(1)}}``, upstream's compile-time
``{{wr.…}}`` — is not a reference: it is text, kept as written (``find_literals`` finds it).

One parser serves the linter (unknown or later steps, undeclared parameters and secrets), the
runner (substitution, one argv element at a time, never through a shell) and the language server
(completion, hover, go to definition inside ``{{ }}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Span

__all__ = [
    "NAMESPACES",
    "StepOutput",
    "TemplateError",
    "TemplateLiteral",
    "TemplateRef",
    "find_literals",
    "find_references",
    "find_templates",
    "lookup",
    "referenced_step_ids",
    "render",
    "render_for_agent",
]


class StepOutput(str):
    """A session step's output: its notes, as text, whose artifacts' fields are read by name
    (``{{steps.ID.output}}`` is the notes, ``{{steps.ID.output.FIELD}}`` a field of an artifact
    the step handed over). A plain string everywhere else (JSON, comparisons)."""

    fields: Mapping[str, Any]

    def __new__(cls, text: str, fields: Mapping[str, Any]) -> StepOutput:
        made = super().__new__(cls, text)
        made.fields = fields
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # copies keep the fields
        return (StepOutput, (str(self), self.fields))


NAMESPACES = ("parameters", "context", "steps", "secrets")
# "[^{}]*" stops at the first brace, so no backtracking; whitespace inside is trimmed afterwards.
_REFERENCE = re.compile(r"\{\{([^{}]*)\}\}")
# An identifier, then dot-separated identifiers or indexes: "currentItem", "steps.plan.output",
# "items.0.name". Written for Python's re and RE2 alike (no lookaround, no backtracking traps).
_DOT_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
# Upstream's compile-time namespace ({{wr.bindings.x}}, {{wr.refs.x}}): never a context variable.
_COMPILE_TIME = "wr"


class TemplateError(ValueError):
    """A reference that cannot be resolved at run time."""


@dataclass(frozen=True, slots=True)
class TemplateRef:
    """A ``{{ … }}`` reference in a string: what it names and where it is."""

    text: str  # the expression inside the braces, trimmed: "steps.plan.output"
    namespace: str
    path: tuple[str, ...]
    span: Span  # within the string, covering "{{ … }}"
    bare: bool = False  # written without a namespace: {{name}} stands for {{context.name}}

    @property
    def step_id(self) -> str | None:
        return self.path[0] if self.namespace == "steps" and self.path else None


@dataclass(frozen=True, slots=True)
class TemplateLiteral:
    """Text in ``{{ }}`` that is no reference (an expression, a Mermaid label): kept as written."""

    text: str  # the text inside the braces, trimmed
    span: Span  # within the string, covering "{{ … }}"
    compile_time: bool  # upstream's {{wr.…}}, resolved by its compiler, not at render time


def _reference(expression: str, span: Span) -> TemplateRef | None:
    if not _DOT_PATH.fullmatch(expression):
        return None
    head, _, rest = expression.partition(".")
    if head == _COMPILE_TIME and rest:
        return None
    if head in NAMESPACES:
        return TemplateRef(expression, head, tuple(rest.split(".")) if rest else (), span)
    return TemplateRef(expression, "context", tuple(expression.split(".")), span, bare=True)


def find_templates(s: str) -> tuple[list[TemplateRef], list[TemplateLiteral]]:
    """The references in ``s`` and the ``{{ … }}`` pieces that are not references (they render
    as written), each in order, in one pass."""
    refs: list[TemplateRef] = []
    literals: list[TemplateLiteral] = []
    if "{{" not in s:
        return refs, literals
    for match in _REFERENCE.finditer(s):
        written = match.group(1)
        expression = written.strip()
        span = Span(match.start(), match.end())
        ref = _reference(expression, span)
        if ref is not None and ref.bare and expression != written:
            # Upstream renders {{name}} only when written tight; {{ name }} stays as written.
            ref = None
        if ref is not None:
            refs.append(ref)
        else:
            compile_time = expression.startswith(_COMPILE_TIME + ".")
            literals.append(TemplateLiteral(expression, span, compile_time))
    return refs, literals


def find_references(s: str) -> list[TemplateRef]:
    """The references in ``s``, in order; text in braces that is no reference is left out."""
    return find_templates(s)[0]


def find_literals(s: str) -> list[TemplateLiteral]:
    """The ``{{ … }}`` pieces of ``s`` that are not references (they render as written)."""
    return find_templates(s)[1]


def lookup(values: Mapping[str, Any], ref: TemplateRef) -> Any:
    """The value a reference names; raises TemplateError naming the missing part."""
    if ref.namespace not in NAMESPACES:
        raise TemplateError(f"unknown template namespace {ref.namespace!r} in {{{{{ref.text}}}}}")
    current: Any = values.get(ref.namespace, {})
    walked = [ref.namespace]
    for part in ref.path:
        walked.append(part)
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        elif isinstance(current, StepOutput) and part in current.fields:
            current = current.fields[part]
        else:
            raise TemplateError(f"{'.'.join(walked)} is not defined (in {{{{{ref.text}}}}})")
    return current


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(s: str, values: Mapping[str, Any]) -> str:
    """Substitute every reference in ``s``; non-string values are inserted as compact JSON.

    Text in braces that is no reference (``{{(a / b).toFixed(1)}}``) stays as written.
    """
    if "{{" not in s:
        return s
    out = []
    end = 0
    for ref in find_references(s):
        out.append(s[end : ref.span.start])
        out.append(_as_text(lookup(values, ref)))
        end = ref.span.end
    out.append(s[end:])
    return "".join(out)


# --- what an agent reads -------------------------------------------------------------------


def render_for_agent(text: str, values: Mapping[str, Any], bare: Mapping[str, Any]) -> str:
    """Fill every reference in ``text`` that an agent may see, for a prompt, title or guidance.

    ``{{parameters.x}}``, ``{{context.x}}`` and ``{{steps.ID.output}}`` come from ``values``;
    upstream's bare ``{{name}}`` / ``{{name.path}}`` from ``bare`` (the context, over the
    parameters). A reference that names nothing shows as ``[unset: name]``, as upstream writes
    it, so a missing value is visible rather than silently empty. ``{{secrets.X}}`` is never
    filled (a secret's value never enters a prompt); what is no reference stays as written.
    """
    if "{{" not in text:
        return text
    out = []
    end = 0
    for ref in find_references(text):
        out.append(text[end : ref.span.start])
        end = ref.span.end
        if ref.namespace == "secrets":
            out.append(text[ref.span.start : ref.span.end])
            continue
        if ref.bare:
            found = _walk(bare, ref.path)
        else:
            try:
                found = lookup(values, ref)
            except TemplateError:
                found = _NOT_FOUND
        if isinstance(found, _Unset):
            out.append(f"[unset: {ref.text}{found.why}]")
        else:
            out.append(_as_agent_text(found))
    out.append(text[end:])
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Unset:
    """A walk of a reference's path that found nothing (rendered as an ``[unset: …]`` marker)."""

    why: str = ""  # after the path in the marker: why the walk stopped, when it is not a plain miss


_NOT_FOUND = _Unset()
_PREVIEW = 60  # characters of a value shown in an [unset: …] marker


def _walk(current: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path``; a list also answers ``length``, as upstream's JavaScript does."""
    for index, part in enumerate(path):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        elif isinstance(current, list) and part == "length":
            current = len(current)
        elif isinstance(current, StepOutput) and part in current.fields:
            current = current.fields[part]
        elif index and not isinstance(current, (Mapping, list)) and current is not None:
            return _not_an_object(path[:index], current)
        else:
            return _NOT_FOUND
    return _NOT_FOUND if current is None else current


def _not_an_object(walked: tuple[str, ...], value: Any) -> _Unset:
    """The walk met a plain value where it needed an object: say which, and what it was."""
    shown = json.dumps(value, ensure_ascii=False)
    if len(shown) > _PREVIEW:
        shown = shown[:_PREVIEW] + "…"
    kind = {str: "a string", bool: "a boolean"}.get(type(value), "a number")
    return _Unset(f" — '{'.'.join(walked)}' is {kind} ({shown}), not an object")


def _as_agent_text(value: Any) -> str:
    if value is None:
        return "null"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def referenced_step_ids(node: Any) -> set[str]:
    """Ids of the steps whose outputs ``node`` reads: ``{{steps.X.output}}`` in any string, or a
    condition's ``var`` naming ``steps.X…``, anywhere in a (JSON-like) value."""
    found: set[str] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        # (str and list first, and a string without braces not scanned: this runs before every
        # command step of a run, over its argv, where `Mapping`'s check is the slow one)
        if isinstance(current, str):
            if "{{" in current:
                found.update(ref.step_id for ref in find_references(current) if ref.step_id)
        elif isinstance(current, list):
            pending.extend(current)
        elif isinstance(current, dict) or isinstance(current, Mapping):
            var = current.get("var")
            if isinstance(var, str) and var.startswith("steps.") and len(var.split(".")) > 1:
                found.add(var.split(".")[1])
            pending.extend(current.values())
    return found
