"""Semantic tokens for ``{{ namespace.name… }}`` references inside strings, so editors can colour
the namespace and the name apart from the rest of the text."""

from __future__ import annotations

from lsprotocol import types

from workrail_engine.evaluation.templates import find_references

from .documents import DocumentState

__all__ = ["semantic_tokens"]

_NAMESPACE, _NAME = 0, 1  # indexes into configuration.SEMANTIC_TOKEN_TYPES


def semantic_tokens(state: DocumentState) -> types.SemanticTokens | None:
    if not state.is_workflow:
        return None
    data: list[int] = []
    previous_line = previous_column = 0
    for start, end, kind in _pieces(state.text):
        line, column = (
            state.positions.position(start).line,
            state.positions.position(start).character,
        )
        end_line, end_column = (
            state.positions.position(end).line,
            state.positions.position(end).character,
        )
        if end_line != line:
            continue  # a token may not span lines
        delta_line = line - previous_line
        delta_column = column - previous_column if delta_line == 0 else column
        data += [delta_line, delta_column, end_column - column, kind, 0]
        previous_line, previous_column = line, column
    return types.SemanticTokens(data=data)


def _pieces(text: str) -> list[tuple[int, int, int]]:
    """(start, end, token type) of each reference's namespace and its first name, in text order."""
    out: list[tuple[int, int, int]] = []
    for ref in find_references(text):
        inside = text[ref.span.start : ref.span.end]
        if ref.bare:  # {{name}}: a context variable written without its namespace
            at = inside.find(ref.text)
            if at >= 0:
                out.append((ref.span.start + at, ref.span.start + at + len(ref.text), _NAME))
            continue
        at = inside.find(ref.namespace)
        if at < 0 or not ref.namespace:
            continue
        start = ref.span.start + at
        out.append((start, start + len(ref.namespace), _NAMESPACE))
        if ref.path:
            name_at = start + len(ref.namespace) + 1
            out.append((name_at, name_at + len(".".join(ref.path)), _NAME))
    return out
