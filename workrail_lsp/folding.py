"""Folding ranges: every object and array that spans lines, from the tolerant tree (so folds stay
while the document is broken, and in YAML).

Bounded: at most ``MAX_FOLDING_RANGES`` (or the client's ``rangeLimit``, if lower), taken
outermost first, level by level, so a 5 MB document costs the nodes of the folds it returns, not
every node it holds (VS Code keeps 5,000 folds per document anyway).
"""

from __future__ import annotations

from lsprotocol import types

from workrail_engine.text.tolerant_tree import Node

from .documents import DocumentState

__all__ = ["MAX_FOLDING_RANGES", "folding_ranges"]

MAX_FOLDING_RANGES = 5000


def folding_ranges(
    state: DocumentState, range_limit: int | None = None
) -> list[types.FoldingRange] | None:
    if not state.is_workflow or state.tree.root is None:
        return None
    limit = min(MAX_FOLDING_RANGES, range_limit or MAX_FOLDING_RANGES)
    index = state.line_index
    text = state.text
    out: list[types.FoldingRange] = []
    # Each container with the offset its fold starts at: its key's line (a YAML block starts
    # on the line after its key), else its own first line. One level at a time, outermost first.
    level: list[tuple[Node, int]] = [(state.tree.root, state.tree.root.start)]
    while level and len(out) < limit:
        deeper: list[tuple[Node, int]] = []
        for node, opening in level:
            if not node.is_container:
                continue
            first, last = index.line_of(opening), index.line_of(max(node.start, node.end - 1))
            if state.is_yaml:
                end = node.end  # a YAML block ends before the blank lines that follow it
                while end > node.start and text[end - 1] in " \t\r\n":
                    end -= 1
                last = index.line_of(end)
            if state.is_json and node.closed and last > first:
                last -= 1  # the closing bracket's line stays visible, as JSON editors fold
            if last > first:
                out.append(types.FoldingRange(start_line=first, end_line=last))
                if len(out) >= limit:
                    break
            if node.kind == "object":
                deeper.extend((m.node, m.key_start) for m in node.members if m.node is not None)
            else:
                deeper.extend((item, item.start) for item in node.items)
        level = deeper
    out.sort(key=lambda r: (r.start_line, -r.end_line))
    return out
