"""Map indexes inside a decoded string value back to offsets in the document's text."""

from __future__ import annotations

import json

from ..diagnostics import Span
from ..text.document import WorkflowDocument

__all__ = ["StringSpans"]

_ESCAPE_LENGTH = {"u": 6}


class StringSpans:
    """The text spans of characters of the string at ``pointer``, for any number of findings.

    The raw text is decoded into an offset table once, not once per finding: that would be
    quadratic in a prompt holding thousands of findings (2,000 in one string: 7 s).
    Falls back to the whole value when the raw text cannot be mapped character by character
    (YAML block scalars, say).
    """

    def __init__(self, doc: WorkflowDocument, pointer: str) -> None:
        self._whole = doc.span(pointer)
        raw = doc.text[self._whole.start : self._whole.end]
        self._offsets: list[int] | range | None
        if doc.format == "json" and raw.startswith('"'):
            offsets = _json_offsets(raw)
            # an escape we did not expect: stay safe
            self._offsets = offsets if len(offsets) == len(json.loads(raw)) + 1 else None
        elif raw and raw[0] in "'\"" or "\n" in raw:
            self._offsets = None
        else:
            self._offsets = range(len(raw) + 1)

    def span(self, start: int, end: int) -> Span:
        """The text span of characters ``start..end`` of the decoded string."""
        offsets = self._offsets
        if offsets is None or end >= len(offsets):
            return self._whole
        return Span(self._whole.start + offsets[start], self._whole.start + offsets[end])


def _json_offsets(raw: str) -> list[int]:
    """offsets[i] = where decoded character i starts in ``raw`` (which includes the quotes)."""
    offsets = []
    i = 1
    while i < len(raw) - 1:
        offsets.append(i)
        if raw[i] == "\\":
            length = _ESCAPE_LENGTH.get(raw[i + 1], 2)
            if (
                length == 6
                and 0xD800 <= int(raw[i + 2 : i + 6], 16) < 0xDC00
                and raw[i + 6 : i + 8] == "\\u"
            ):
                length = 12  # a surrogate pair decodes to one character
            i += length
        else:
            i += 1
    offsets.append(i)
    return offsets
