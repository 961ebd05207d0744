"""Selection ranges (expand selection): the token, its member, the enclosing containers, outward."""

from __future__ import annotations

from lsprotocol import types

from workrail_engine.diagnostics import Span

from .documents import DocumentState

__all__ = ["selection_ranges"]


def selection_ranges(
    state: DocumentState, positions: list[types.Position]
) -> list[types.SelectionRange] | None:
    if not state.is_workflow:
        return None
    return [_at(state, state.positions.offset(p)) for p in positions]


def _at(state: DocumentState, offset: int) -> types.SelectionRange:
    spans: list[Span] = []  # outermost first
    chain = state.tree.node_at(offset)
    for position, (_step, node) in enumerate(chain):
        spans.append(Span(node.start, node.end))
        if node.kind == "object":
            child = chain[position + 1][1] if position + 1 < len(chain) else None
            for member in node.members:
                inside_key = member.key_start <= offset <= member.key_end
                if member.node is child and child is not None or inside_key:
                    spans.append(Span(member.key_start, member.end))  # "key": value
                    if inside_key:
                        spans.append(Span(member.key_start, member.key_end))
                    break
    selection: types.SelectionRange | None = None
    last: Span | None = None
    for span in spans:
        if span == last:
            continue
        selection = types.SelectionRange(range=state.positions.range(span), parent=selection)
        last = span
    if selection is None:
        selection = types.SelectionRange(range=state.positions.range(Span(offset, offset)))
    return selection
