"""Offsets ↔ LSP positions in the encoding negotiated with the client.

pygls's own conversions re-split the whole text on every call (several milliseconds per call on a
1 MB document); the engine's LineIndex is built once per document version and bisects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:  # the engine's modules are not needed to answer ``initialize``
    from workrail_engine.diagnostics import Span
    from workrail_engine.text.document import LineIndex

__all__ = ["Positions", "encoding_name"]

_NAMES = {
    types.PositionEncodingKind.Utf8: "utf-8",
    types.PositionEncodingKind.Utf16: "utf-16",
    types.PositionEncodingKind.Utf32: "utf-32",
}


def encoding_name(kind: types.PositionEncodingKind | str | None) -> str:
    if kind is None:
        return "utf-16"
    return _NAMES.get(kind, str(kind) if str(kind) in _NAMES.values() else "utf-16")  # type: ignore[call-overload]


class Positions:
    """Conversions for one text version and one encoding."""

    def __init__(self, index: LineIndex, encoding: str) -> None:
        self.index = index
        self.encoding = encoding

    def position(self, offset: int) -> types.Position:
        line, column = self.index.position(offset, self.encoding)
        return types.Position(line=line, character=column)

    def range(self, span: Span) -> types.Range:
        return types.Range(start=self.position(span.start), end=self.position(span.end))

    def offset(self, position: types.Position) -> int:
        return self.index.offset(position.line, position.character, self.encoding)

    def span(self, range_: types.Range) -> Span:
        from workrail_engine.diagnostics import Span  # see the imports above

        start, end = self.offset(range_.start), self.offset(range_.end)
        return Span(start, max(start, end))
