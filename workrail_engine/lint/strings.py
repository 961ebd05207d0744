"""Map an index inside a decoded string value back to an offset in the document's text."""

from __future__ import annotations

import json

from ..diagnostics import Span
from ..document import WorkflowDocument

__all__ = ["span_in_string"]

_ESCAPE_LENGTH = {"u": 6}


def span_in_string(doc: WorkflowDocument, pointer: str, start: int, end: int) -> Span:
    """The text span of characters ``start..end`` of the string at ``pointer``.

    Falls back to the whole value when the raw text cannot be mapped character by character
    (YAML block scalars, say).
    """
    whole = doc.span(pointer)
    raw = doc.text[whole.start : whole.end]
    if doc.format == "json" and raw.startswith('"'):
        offsets = _json_offsets(raw)
        if len(offsets) != len(json.loads(raw)) + 1:  # an escape we did not expect: stay safe
            return whole
    elif raw and raw[0] in "'\"" or "\n" in raw:
        return whole
    else:
        offsets = list(range(len(raw) + 1))
    if end >= len(offsets):
        return whole
    return Span(whole.start + offsets[start], whole.start + offsets[end])


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
