"""Inlay hints: after a ``runCondition`` its reading in words (the text hover shows), after a loop
its bound, after ``{{steps.x.output}}`` the title of the step that produces it."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from workrail_engine.definition.steps import walk_steps

from .documents import DocumentState
from .hover import condition_text
from .occurrences import occurrences
from .workflow_facts import facts_of

__all__ = ["inlay_hints"]


def inlay_hints(state: DocumentState, requested: types.Range) -> list[types.InlayHint] | None:
    value = state.value
    if not state.is_workflow or not isinstance(value, Mapping):
        return None
    span = state.positions.span(requested)
    # Found once per version: an editor asks for each range it scrolls to.
    hints: list[tuple[int, str]] = state.memo("inlay_hints", lambda: _hints(state, value))
    first, last = bisect_left(hints, (span.start, "")), bisect_right(hints, (span.end, "\uffff"))
    return [
        types.InlayHint(
            position=state.positions.position(at),
            label=label,
            padding_left=True,
            kind=types.InlayHintKind.Parameter,
        )
        for at, label in hints[first:last]
    ]


def _hints(state: DocumentState, value: Mapping[str, Any]) -> list[tuple[int, str]]:
    hints: list[tuple[int, str]] = []
    for site in walk_steps(value):
        step = site.step
        path = tuple(int(p) if p.isdigit() else p for p in site.pointer.split("/")[1:])
        if isinstance(step.get("runCondition"), Mapping):
            text = condition_text(value, (*path, "runCondition"))
            end = _end(state, f"{site.pointer}/runCondition")
            if text and end is not None:
                hints.append((end, text))
        bound = _loop_bound(step.get("loop"))
        end = _end(state, f"{site.pointer}/loop") if bound else None
        if bound and end is not None:
            hints.append((end, bound))
    facts = facts_of(value)
    for found in occurrences(state):
        if found.namespace != "steps" or found.is_definition or found.name not in facts.steps:
            continue
        closing = state.text.find("}}", found.span.end, found.span.end + 200)
        title = facts.steps[found.name].get("title")
        if closing >= 0 and isinstance(title, str):
            hints.append((closing + 2, f"← {title}"))
    return sorted(hints)


def _end(state: DocumentState, pointer: str) -> int | None:
    found = state.tree.locate(pointer)
    return found[1].end if found is not None else None


def _loop_bound(loop: Any) -> str | None:
    if not isinstance(loop, Mapping):
        return None
    kind = loop.get("type")
    count, most = loop.get("count"), loop.get("maxIterations")
    if kind == "for" and isinstance(count, int):
        return f"{count} times"
    if kind == "forEach" and isinstance(loop.get("items"), str):
        bound = f"once per item of {loop['items']}"
        return f"{bound}, at most {most}" if isinstance(most, int) else bound
    if isinstance(most, int):
        return f"at most {most} iterations"
    return None
