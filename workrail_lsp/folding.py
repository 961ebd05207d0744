"""Folding ranges: every object and array that spans lines, from the tolerant tree (so folds stay
while the document is broken, and in YAML)."""

from __future__ import annotations

from lsprotocol import types

from workrail_engine.tolerant_document import Node

from .documents import DocumentState

__all__ = ["folding_ranges"]


def folding_ranges(state: DocumentState) -> list[types.FoldingRange] | None:
    if not state.is_workflow or state.tree.root is None:
        return None
    index = state.line_index
    out: list[types.FoldingRange] = []
    # Each container with the offset its fold starts at: its key's line (a YAML block starts
    # on the line after its key), else its own first line.
    stack: list[tuple[Node, int]] = [(state.tree.root, state.tree.root.start)]
    while stack:
        node, opening = stack.pop()
        if not node.is_container:
            continue
        first, last = index.line_of(opening), index.line_of(max(node.start, node.end - 1))
        if state.is_yaml:
            last = index.line_of(len(state.text[: node.end].rstrip()))
        if state.is_json and node.closed and last > first:
            last -= 1  # the closing bracket's line stays visible, as JSON editors fold
        if last > first:
            out.append(types.FoldingRange(start_line=first, end_line=last))
        if node.kind == "object":
            stack.extend((m.node, m.key_start) for m in node.members if m.node is not None)
        else:
            stack.extend((item, item.start) for item in node.items)
    out.sort(key=lambda r: (r.start_line, -r.end_line))
    return out
