"""Map indexes inside a decoded string value back to offsets in the document's text."""

from __future__ import annotations

import json

from ..diagnostics import Span
from ..text.document import WorkflowDocument
from ..text.json_pointer import unescape_token

__all__ = ["StringSpans"]

_ESCAPE_LENGTH = {"u": 6}


class StringSpans:
    """The text spans of characters of the string at ``pointer``, for any number of findings.

    The raw text is decoded into an offset table once: a prompt holding thousands of findings
    used to rebuild it for each one (quadratic: 2,000 findings in one string took 7 s).
    Maps JSON strings, YAML plain scalars on one line and YAML literal block scalars (``|``)
    exactly; falls back to the whole value for the other YAML forms (quoted, folded ``>``, plain
    over several lines), where a character's place would be a guess.
    """

    def __init__(self, doc: WorkflowDocument, pointer: str) -> None:
        self._whole = doc.span(pointer)
        raw = doc.text[self._whole.start : self._whole.end]
        self._offsets: list[int] | range | None
        if doc.format == "json" and raw.startswith('"'):
            offsets = _json_offsets(raw)
            # an escape we did not expect: stay safe
            self._offsets = offsets if len(offsets) == len(json.loads(raw)) + 1 else None
        elif raw.startswith("|"):
            self._offsets = _literal_block_offsets(raw, _value_at(doc.value, pointer))
        elif raw and raw[0] in "'\"" or "\n" in raw:
            self._offsets = None
        else:
            self._offsets = range(len(raw) + 1)
        self._json = doc.format == "json"

    @property
    def exact(self) -> bool:
        """Whether each character has its own place (else every span is the whole value)."""
        return self._offsets is not None

    def escaped(self, text: str) -> str | None:
        """``text`` as it must be written inside this string, or None where an edit could
        change more than it says (a line break in a block scalar)."""
        if self._json:
            return json.dumps(text, ensure_ascii=False)[1:-1]
        return text if self._offsets is not None and "\n" not in text else None

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


def _literal_block_offsets(raw: str, decoded: object) -> list[int] | None:
    """Offsets of a YAML literal block scalar (``|``, ``|-``, ``|+``; the raw text starts at the
    indicator): each content line is its raw line less the block's indentation. None unless every
    decoded character is found where the table puts it."""
    if not isinstance(decoded, str):
        return None
    header_end = raw.find("\n")
    if header_end < 0:
        return None
    lines = raw[header_end + 1 :].split("\n")
    indent = next((len(x) - len(x.lstrip(" ")) for x in lines if x.strip()), 0)
    offsets: list[int] = []
    at = header_end + 1
    for line in lines:
        start = at + min(indent, len(line))
        offsets.extend(range(start, at + len(line) + 1))  # the characters and the line break
        at += len(line) + 1
        if len(offsets) > len(decoded):
            break
    offsets = offsets[: len(decoded) + 1]
    if len(offsets) != len(decoded) + 1 or any(
        raw[o] != c for o, c in zip(offsets, decoded, strict=False) if o < len(raw)
    ):
        return None
    return offsets


def _value_at(value: object, pointer: str) -> object:
    for token in pointer.split("/")[1:]:
        if isinstance(value, dict):
            value = value.get(unescape_token(token))
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value
