"""Document symbols: the workflow, its steps, parallel groups with members, loops with bodies.

Read from the tolerant tree: the outline stays while the author types (broken JSON) and in YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from workrail_engine.steps import step_kind

from .documents import DocumentState

__all__ = ["document_symbols"]

_KINDS = {
    "prompt": types.SymbolKind.Event,
    "command": types.SymbolKind.Function,
    "parallel": types.SymbolKind.Array,
    "loop": types.SymbolKind.Module,
}


def document_symbols(state: DocumentState) -> list[types.DocumentSymbol] | None:
    value = state.tree.value
    if not state.is_workflow or not isinstance(value, Mapping):
        return None
    name = value.get("name") if isinstance(value.get("name"), str) else value.get("id")
    whole = state.positions.range(state.tree.span(""))
    children = _steps(state, value.get("steps"), "/steps")
    return [
        types.DocumentSymbol(
            name=str(name or "workflow"),
            detail=str(value.get("id", "")),
            kind=types.SymbolKind.Namespace,
            range=whole,
            selection_range=_selection(state, "", "/id"),
            children=children,
        )
    ]


def _steps(state: DocumentState, steps: Any, pointer: str) -> list[types.DocumentSymbol]:
    if not isinstance(steps, list):
        return []
    out = []
    for index, step in enumerate(steps):
        if isinstance(step, Mapping):
            out.append(_step(state, step, f"{pointer}/{index}"))
    return out


def _step(state: DocumentState, step: Mapping[str, Any], pointer: str) -> types.DocumentSymbol:
    kind = step_kind(step)
    children: list[types.DocumentSymbol] = []
    if kind == "parallel":
        children = _steps(state, step.get("steps"), f"{pointer}/steps")
    elif kind == "loop" and isinstance(step.get("body"), list):
        children = _steps(state, step.get("body"), f"{pointer}/body")
    elif kind == "loop" and isinstance(step.get("body"), str):
        children = [_body_reference(state, step["body"], f"{pointer}/body")]
    title = step.get("title")
    return types.DocumentSymbol(
        name=str(step.get("id") or title or kind),
        detail=f"{kind}: {title}" if isinstance(title, str) else kind,
        kind=_KINDS[kind],
        range=state.positions.range(state.tree.span(pointer)),
        selection_range=_selection(state, pointer, f"{pointer}/id"),
        children=children or None,
    )


def _body_reference(state: DocumentState, body: str, pointer: str) -> types.DocumentSymbol:
    where = state.positions.range(state.tree.span(pointer))
    return types.DocumentSymbol(
        name=body,
        detail="loop body (step id)",
        kind=types.SymbolKind.Key,
        range=where,
        selection_range=where,
    )


def _selection(state: DocumentState, pointer: str, id_pointer: str) -> types.Range:
    span = state.tree.value_span(id_pointer) or state.tree.opening_span(pointer)
    return state.positions.range(span)
