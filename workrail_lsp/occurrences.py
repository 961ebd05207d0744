"""Where each name a workflow defines is defined and used, for definition, references and rename.

- steps: ``id`` values (definitions), loop ``body`` ids and ``{{steps.ID…}}`` (uses);
- parameters: the key under ``parameters.properties`` and ``{{parameters.NAME}}``;
- secrets: the entry in ``secrets`` and ``{{secrets.NAME}}``.

Read from the tolerant tree, so they are found in YAML and in JSON being typed; a name is only
placed where its text is written as is (no escapes), so renaming edits exactly its characters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workrail_engine.definition.declared import declared_parameters
from workrail_engine.definition.steps import walk_steps
from workrail_engine.diagnostics import Span
from workrail_engine.evaluation.templates import find_references
from workrail_engine.text.json_pointer import escape_token

from .documents import DocumentState

__all__ = ["Occurrence", "occurrence_at", "occurrences"]


@dataclass(frozen=True)
class Occurrence:
    namespace: str  # "steps" | "parameters" | "secrets"
    name: str
    span: Span  # the name's characters only (no quotes, no braces)
    is_definition: bool

    def same_name(self, other: Occurrence) -> bool:
        return (self.namespace, self.name) == (other.namespace, other.name)


def occurrences(state: DocumentState) -> list[Occurrence]:
    return state.memo("occurrences", lambda: _find(state))


def occurrence_at(state: DocumentState, offset: int) -> Occurrence | None:
    for found in occurrences(state):
        if found.span.start <= offset <= found.span.end:
            return found
    return None


def _find(state: DocumentState) -> list[Occurrence]:
    value = state.value
    if not isinstance(value, Mapping):
        return []
    found: list[Occurrence] = []
    for site in walk_steps(value):
        step = site.step
        if isinstance(step.get("id"), str):
            found.extend(_quoted(state, "steps", f"{site.pointer}/id", step["id"], True))
        if isinstance(step.get("body"), str):
            found.extend(_quoted(state, "steps", f"{site.pointer}/body", step["body"], False))
    found.extend(_parameter_definitions(state, value))
    secrets = value.get("secrets")
    if isinstance(secrets, list):
        for index, name in enumerate(secrets):
            if isinstance(name, str):
                found.extend(_quoted(state, "secrets", f"/secrets/{index}", name, True))
    for pointer, _text in _template_strings(value, ""):
        found.extend(_template_occurrences(state, pointer))
    return found


def _parameter_definitions(state: DocumentState, value: Mapping[str, Any]) -> list[Occurrence]:
    out = []
    for name in declared_parameters(value):
        found = state.tree.locate(f"/parameters/properties/{escape_token(name)}")
        if found is None or found[0] is None:
            continue
        member = found[0]
        inner = _unquoted(state.text, member.key_start, member.key_end)
        if state.text[inner.start : inner.end] == name:
            out.append(Occurrence("parameters", name, inner, True))
    return out


def _unquoted(text: str, start: int, end: int) -> Span:
    if end - start >= 2 and text[start] in "\"'" and text[end - 1] == text[start]:
        return Span(start + 1, end - 1)
    return Span(start, end)


def _quoted(
    state: DocumentState, namespace: str, pointer: str, text: str, definition: bool
) -> list[Occurrence]:
    found = state.tree.locate(pointer)
    if found is None:
        return []
    node = found[1]
    inner = Span(node.content_start, node.content_end)
    if node.kind != "string" or not node.exact or state.text[inner.start : inner.end] != text:
        return []  # an escaped or folded string: not renamed in place
    return [Occurrence(namespace, text, inner, definition)]


def _template_strings(node: Any, pointer: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    stack = [(node, pointer)]
    while stack:
        current, at = stack.pop()
        if isinstance(current, str):
            if "{{" in current:
                out.append((at, current))
        elif isinstance(current, Mapping):
            stack.extend((v, f"{at}/{escape_token(k)}") for k, v in current.items())
        elif isinstance(current, list):
            stack.extend((v, f"{at}/{i}") for i, v in enumerate(current))
    return out


def _template_occurrences(state: DocumentState, pointer: str) -> list[Occurrence]:
    found = state.tree.locate(pointer)
    if found is None or found[1].kind != "string":
        return []
    node = found[1]
    raw = state.text[node.content_start : node.content_end]
    out = []
    for ref in find_references(raw):
        if ref.namespace not in ("steps", "parameters", "secrets") or not ref.path:
            continue
        name = ref.path[0]
        inside = raw[ref.span.start : ref.span.end]
        at = inside.find(f"{ref.namespace}.{name}")
        if at < 0:
            continue
        start = node.content_start + ref.span.start + at + len(ref.namespace) + 1
        out.append(Occurrence(ref.namespace, name, Span(start, start + len(name)), False))
    return out
