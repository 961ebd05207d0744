"""A tolerant tree in a form tests compare: two ways of building a tree must agree on it."""

from __future__ import annotations


def tree_shape(document, node=None, out=None):
    """Every node's kind and span, and every member's key span, in a comparable form."""
    out = [] if out is None else out
    node = document.root if node is None else node
    if node is None:
        return out
    out.append((node.kind, node.start, node.end))
    if node.kind == "object":
        for m in node.members:
            out.append((m.key, m.key_start, m.key_end))
            if m.node is not None:
                tree_shape(document, m.node, out)
    elif node.kind == "array":
        for item in node.items:
            tree_shape(document, item, out)
    return out
