"""Where each step id is defined and referenced: ``id`` values, loop ``body`` ids, and
``{{steps.ID…}}`` inside strings. Shared by definition, references and rename.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workrail_engine.diagnostics import Span
from workrail_engine.steps import walk_steps
from workrail_engine.templates import find_references

from .documents import DocumentState

__all__ = ["Occurrence", "occurrence_at", "occurrences"]


@dataclass(frozen=True)
class Occurrence:
    step_id: str
    span: Span  # the id's characters only (no quotes, no braces)
    is_definition: bool


def occurrences(state: DocumentState) -> list[Occurrence]:
    return state.memo("step-occurrences", lambda: _find(state))


def occurrence_at(state: DocumentState, offset: int) -> Occurrence | None:
    for found in occurrences(state):
        if found.span.start <= offset <= found.span.end:
            return found
    return None


def _find(state: DocumentState) -> list[Occurrence]:
    value = state.document.value
    if not isinstance(value, Mapping):
        return []
    found: list[Occurrence] = []
    for site in walk_steps(value):
        step = site.step
        if isinstance(step.get("id"), str):
            found.extend(_string_occurrence(state, f"{site.pointer}/id", step["id"], True))
        if isinstance(step.get("body"), str):
            found.extend(_string_occurrence(state, f"{site.pointer}/body", step["body"], False))
    for pointer, text in _template_strings(value, ""):
        found.extend(_template_occurrences(state, pointer, text))
    return found


def _string_occurrence(state: DocumentState, pointer: str, text: str, definition: bool) -> list[Occurrence]:
    span = state.document.value_span(pointer)
    if span is None or state.text[span.start : span.end] != f'"{text}"':
        return []  # escaped or YAML-styled strings: not renamed in place
    return [Occurrence(text, Span(span.start + 1, span.end - 1), definition)]


def _template_strings(node: Any, pointer: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    stack = [(node, pointer)]
    while stack:
        current, at = stack.pop()
        if isinstance(current, str):
            if "{{" in current:
                out.append((at, current))
        elif isinstance(current, Mapping):
            stack.extend((v, f"{at}/{_escape(k)}") for k, v in current.items())
        elif isinstance(current, list):
            stack.extend((v, f"{at}/{i}") for i, v in enumerate(current))
    return out


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _template_occurrences(state: DocumentState, pointer: str, text: str) -> list[Occurrence]:
    span = state.document.value_span(pointer)
    if span is None:
        return []
    raw = state.text[span.start + 1 : span.end - 1]
    out = []
    for ref in find_references(raw):
        step_id = ref.step_id
        if step_id is None:
            continue
        inside = raw[ref.span.start : ref.span.end]
        at = inside.find("steps." + step_id)
        if at < 0:
            continue
        start = span.start + 1 + ref.span.start + at + len("steps.")
        out.append(Occurrence(step_id, Span(start, start + len(step_id)), False))
    return out
