"""Placing a JSON pointer in a document's text: what the strict document and the
tolerant one share, in a module of its own so that neither imports the other.
"""

from __future__ import annotations

from ..diagnostics import Span


class PointerSpans:
    """Placing a JSON pointer, for any document model that can give a value's and a key's span."""

    text: str

    def value_span(self, pointer: str) -> Span | None:
        raise NotImplementedError

    def key_span(self, pointer: str) -> Span | None:
        raise NotImplementedError

    def span(self, pointer: str) -> Span:
        """The value's span, or the nearest existing ancestor's; the start of the text at worst."""
        while True:
            found = self.value_span(pointer)
            if found is not None:
                return found
            if not pointer:
                return Span(0, min(1, len(self.text)))
            pointer = pointer.rsplit("/", 1)[0]

    def opening_span(self, pointer: str) -> Span:
        """Where to report something about a whole object: its key if it has one, else its '{'."""
        key = self.key_span(pointer)
        if key is not None:
            return key
        value = self.span(pointer)
        return Span(value.start, min(value.start + 1, value.end))
