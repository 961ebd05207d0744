"""Formatting: 2-space JSON, keys in their written order, scalars exactly as written.

Only a document that parses strictly is formatted (a broken one is left alone). The text is
re-emitted token by token rather than through ``json.dumps`` so numbers like ``1.0`` or ``1e3``
and string escapes stay as the author wrote them.
"""

from __future__ import annotations

import json
import re

from lsprotocol import types

from workrail_engine.diagnostics import Span

from .documents import DocumentState

__all__ = ["format_document", "format_json"]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def format_json(text: str, indent: str = "  ") -> str:
    out: list[str] = []
    depth = 0
    tokens = _TOKEN.findall(text)
    for position, token in enumerate(tokens):
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        if token in "{[" and len(token) == 1:
            if following in ("}", "]"):
                out.append(token)  # the closer follows right away: "{}" / "[]"
                continue
            depth += 1
            out.append(token + "\n" + indent * depth)
        elif token in "}]" and len(token) == 1:
            previous = tokens[position - 1] if position else ""
            if previous not in ("{", "["):
                depth -= 1
                out.append("\n" + indent * depth)
            out.append(token)
        elif token == ",":
            out.append(",\n" + indent * depth)
        elif token == ":":
            out.append(": ")
        else:
            out.append(token)
    return "".join(out) + "\n"


def format_document(state: DocumentState) -> list[types.TextEdit] | None:
    if not state.is_json or state.document.value is None or state.document.syntax_errors:
        return None
    formatted = format_json(state.text)
    if formatted == state.text:
        return []
    whole = Span(0, len(state.text))
    return [types.TextEdit(range=state.positions.range(whole), new_text=formatted)]


def format_range(state: DocumentState, requested: types.Range) -> list[types.TextEdit] | None:
    """Format the smallest object or array that holds the whole range (JSON; YAML is not
    formatted, so its comments and layout are never touched). The container must be valid JSON
    on its own, even if the rest of the document is still broken."""
    if not state.is_json or not state.is_workflow:
        return None
    span = state.positions.span(requested)
    container = None
    for _step, node in state.tree.node_at(span.start):
        if node.is_container and node.closed and node.start <= span.start and span.end <= node.end:
            container = node
    if container is None:
        return None
    original = state.text[container.start : container.end]
    try:
        json.loads(original)
    except ValueError:
        return None
    line_start = state.text.rfind("\n", 0, container.start) + 1
    indent = state.text[line_start : container.start]
    indent = indent if not indent.strip() else " " * (len(indent) - len(indent.lstrip()))
    formatted = format_json(original).rstrip("\n").replace("\n", "\n" + indent)
    if formatted == original:
        return []
    return [
        types.TextEdit(
            range=state.positions.range(Span(container.start, container.end)), new_text=formatted
        )
    ]
