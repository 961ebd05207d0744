"""``{{ namespace.path }}`` references in prompts and argv elements.

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

from .diagnostics import Span

__all__ = [
    "NAMESPACES",
    "TemplateError",
    "TemplateRef",
    "find_references",
    "lookup",
    "render",
    "render_for_agent",
]

NAMESPACES = ("parameters", "context", "steps", "secrets")
# "[^{}]*" stops at the first brace, so no backtracking; whitespace inside is trimmed afterwards.
_REFERENCE = re.compile(r"\{\{([^{}]*)\}\}")


class TemplateError(ValueError):
    """A reference that cannot be resolved at run time."""


@dataclass(frozen=True, slots=True)
class TemplateRef:
    text: str  # the expression inside the braces, trimmed: "steps.plan.output"
    namespace: str
    path: tuple[str, ...]
    span: Span  # within the string, covering "{{ … }}"

    @property
    def step_id(self) -> str | None:
        return self.path[0] if self.namespace == "steps" and self.path else None


def find_references(s: str) -> list[TemplateRef]:
    refs: list[TemplateRef] = []
    if "{{" not in s:
        return refs
    for match in _REFERENCE.finditer(s):
        expression = match.group(1).strip()
        namespace, _, rest = expression.partition(".")
        path = tuple(part for part in rest.split(".")) if rest else ()
        refs.append(TemplateRef(expression, namespace, path, Span(match.start(), match.end())))
    return refs


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
        else:
            raise TemplateError(f"{'.'.join(walked)} is not defined (in {{{{{ref.text}}}}})")
    return current


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(s: str, values: Mapping[str, Any]) -> str:
    """Substitute every reference in ``s``; non-string values are inserted as compact JSON."""
    if "{{" not in s:
        return s
    return _REFERENCE.sub(lambda m: _as_text(lookup(values, find_references(m.group(0))[0])), s)


# --- what an agent reads -------------------------------------------------------------------

# A reference an agent's text may hold: a dotted path of identifiers (list indexes allowed after
# the first segment). Anything else between braces — an expression, Mermaid's {{"text"}} — is
# literal text and stays as written.
_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[\w-]+)*")
_SERVED_NAMESPACES = ("parameters", "context", "steps")


def render_for_agent(text: str, values: Mapping[str, Any], bare: Mapping[str, Any]) -> str:
    """Fill every reference in ``text`` that an agent may see, for a prompt, title or guidance.

    ``{{parameters.x}}``, ``{{context.x}}`` and ``{{steps.ID.output}}`` come from ``values``;
    upstream's bare ``{{name}}`` / ``{{name.path}}`` from ``bare`` (the context). A reference
    that names nothing shows as ``[unset: name]``, so a missing value is visible rather than
    silently empty. ``{{secrets.X}}`` is never filled (a secret's value never enters a prompt),
    ``{{wr.…}}`` belongs to the compile step, and expressions stay as written.
    """
    if "{{" not in text:
        return text

    def fill(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        if not _PATH.fullmatch(expression):
            return match.group(0)
        namespace = expression.partition(".")[0]
        if namespace in ("secrets", "wr"):
            return match.group(0)
        if namespace in _SERVED_NAMESPACES and "." in expression:
            ref = find_references(match.group(0))[0]
            try:
                return _as_agent_text(lookup(values, ref))
            except TemplateError:
                return f"[unset: {expression}]"
        found = _walk(bare, expression.split("."))
        return f"[unset: {expression}]" if found is _NOT_FOUND else _as_agent_text(found)

    return _REFERENCE.sub(fill, text)


_NOT_FOUND = object()


def _walk(current: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return _NOT_FOUND
    return _NOT_FOUND if current is None else current


def _as_agent_text(value: Any) -> str:
    if value is None:
        return "null"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
