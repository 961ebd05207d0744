"""Document symbols: the workflow, its steps, parallel groups with members, loops with bodies.

Walked on the tolerant tree's nodes (not through pointers from the root): the outline stays while
the author types (broken JSON) and in YAML. A top-level step whose text and starting position are
unchanged since the previous outline of the document reuses its symbol: typing in one step of a
2,800-step document rebuilds one symbol, not 2,800.

Bounded: at most ``MAX_OUTLINE_SYMBOLS`` symbols, steps in document order; what is left out is
one last symbol that says how many steps it stands for (a 5 MB document had 24,000 symbols and
took seconds to build and send).
"""

from __future__ import annotations

from collections.abc import Mapping

from lsprotocol import types

from workrail_engine.definition.steps import step_kind
from workrail_engine.diagnostics import Span
from workrail_engine.text.tolerant_tree import Node

from .documents import DocumentState

__all__ = ["MAX_OUTLINE_SYMBOLS", "document_symbols"]

MAX_OUTLINE_SYMBOLS = 5000

_KINDS = {
    "prompt": types.SymbolKind.Event,
    "command": types.SymbolKind.Function,
    "parallel": types.SymbolKind.Array,
    "loop": types.SymbolKind.Module,
}


_StepKey = tuple[int, int, str]  # (line, column, text) of a top-level step
_previous: dict[str, dict[_StepKey, types.DocumentSymbol]] = {}  # per document: the last outline


def forget(uri: str) -> object:
    """Drop the document's outline kept for reuse; returned, for the caller to free."""
    return _previous.pop(uri, None)


def document_symbols(state: DocumentState) -> list[types.DocumentSymbol] | None:
    root = state.tree.root
    if not state.is_workflow or root is None or root.kind != "object":
        return None
    known = _previous.get(state.uri, {})
    kept: dict[_StepKey, types.DocumentSymbol] = {}
    steps = root.member("steps")
    children: list[types.DocumentSymbol] = []
    budget = [MAX_OUTLINE_SYMBOLS]  # symbols still to give, spent by _step
    if steps is not None and steps.node is not None and steps.node.kind == "array":
        items = [item for item in steps.node.items if item.kind == "object"]
        for shown, item in enumerate(items):
            if budget[0] <= 0:
                children.append(_left_out(state, items[shown:]))
                break
            start = state.positions.position(item.start)
            key = (start.line, start.character, state.text[item.start : item.end])
            symbol = known.get(key) or _step(state, item, budget)
            if key in known:
                budget[0] -= _count(symbol)
            kept[key] = symbol
            children.append(symbol)
    _previous[state.uri] = kept
    name = _scalar(root, "name")
    workflow_id = _scalar(root, "id")
    return [
        types.DocumentSymbol(
            name=str(name if isinstance(name, str) else workflow_id or "workflow"),
            detail=str(workflow_id or ""),
            kind=types.SymbolKind.Namespace,
            range=state.positions.range(Span(root.start, root.end)),
            selection_range=_selection(state, root),
            children=children,
        )
    ]


def _scalar(node: Node, key: str) -> object:
    member = node.member(key)
    return member.node.value if member is not None and member.node is not None else None


def _left_out(state: DocumentState, items: list[Node]) -> types.DocumentSymbol:
    where = state.positions.range(Span(items[0].start, items[-1].end))
    return types.DocumentSymbol(
        name=f"… {len(items):,} more steps",
        detail=f"the outline shows at most {MAX_OUTLINE_SYMBOLS:,} symbols",
        kind=types.SymbolKind.Null,
        range=where,
        selection_range=state.positions.range(Span(items[0].start, items[0].start + 1)),
    )


def _count(symbol: types.DocumentSymbol) -> int:
    return 1 + sum(_count(child) for child in symbol.children or [])


def _steps(
    state: DocumentState, steps: Node | None, budget: list[int]
) -> list[types.DocumentSymbol]:
    if steps is None or steps.kind != "array":
        return []
    items = [item for item in steps.items if item.kind == "object"]
    out = []
    for shown, item in enumerate(items):
        if budget[0] <= 0:
            out.append(_left_out(state, items[shown:]))
            break
        out.append(_step(state, item, budget))
    return out


def _step(state: DocumentState, node: Node, budget: list[int]) -> types.DocumentSymbol:
    budget[0] -= 1
    step = node.value if isinstance(node.value, Mapping) else {}
    kind = step_kind(step)
    children: list[types.DocumentSymbol] = []
    if kind == "parallel":
        inner = node.member("steps")
        children = _steps(state, inner.node if inner else None, budget)
    elif kind == "loop":
        body = node.member("body")
        if body is not None and body.node is not None and body.node.kind == "array":
            children = _steps(state, body.node, budget)
        elif body is not None and body.node is not None and isinstance(step.get("body"), str):
            where = state.positions.range(Span(body.node.start, body.node.end))
            children = [
                types.DocumentSymbol(
                    name=step["body"],
                    detail="loop body (step id)",
                    kind=types.SymbolKind.Key,
                    range=where,
                    selection_range=where,
                )
            ]
    title = step.get("title")
    return types.DocumentSymbol(
        name=str(step.get("id") or title or kind),
        detail=f"{kind}: {title}" if isinstance(title, str) else kind,
        kind=_KINDS[kind],
        range=state.positions.range(Span(node.start, node.end)),
        selection_range=_selection(state, node),
        children=children or None,
    )


def _selection(state: DocumentState, node: Node) -> types.Range:
    member = node.member("id")
    if member is not None and member.node is not None:
        return state.positions.range(Span(member.node.start, member.node.end))
    return state.positions.range(Span(node.start, min(node.start + 1, node.end)))
