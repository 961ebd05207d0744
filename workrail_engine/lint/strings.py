"""Map indexes inside a decoded string value back to offsets in the document's text."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from ..diagnostics import Span
from ..text.document import WorkflowDocument
from ..text.json_pointer import unescape_token

__all__ = ["StringSpans", "value_at"]


class StringSpans:
    """The text spans of characters of the string at ``pointer``, for any number of findings.

    The raw text is decoded into an offset table once, not once per finding: that would be
    quadratic in a prompt holding thousands of findings (2,000 in one string: 7 s).
    Maps JSON strings, YAML plain and quoted scalars on one line and YAML literal block scalars
    (``|``) exactly; falls back to the whole value for the other YAML forms (folded ``>``, plain or
    quoted over several lines), where a character's place would be a guess.
    """

    def __init__(self, doc: WorkflowDocument, pointer: str) -> None:
        self._whole = doc.span(pointer)
        raw = doc.text[self._whole.start : self._whole.end]
        self._offsets: list[int] | range | None = None
        # how an edit's text is written into this string: None where edits are not offered
        self._writer: Callable[[str], str | None] | None = None
        if raw.startswith('"') and (doc.format == "json" or "\n" not in raw):
            # YAML's double-quoted escapes include JSON's; one of its own would change the length
            offsets = _json_offsets(raw)
            decoded = json.loads(raw) if doc.format == "json" else value_at(doc.value, pointer)
            if isinstance(decoded, str) and len(offsets) == len(decoded) + 1:
                self._offsets, self._writer = offsets, _json_escaped
        elif raw.startswith("'") and "\n" not in raw:
            self._offsets = _single_quoted_offsets(raw)
            self._writer = _single_quoted
        elif raw.startswith("|"):
            self._offsets = _literal_block_offsets(raw, value_at(doc.value, pointer))
            self._writer = _as_is
        elif raw and raw[0] not in "'\"" and "\n" not in raw:
            self._offsets = range(len(raw) + 1)  # a plain scalar: no edits (a quote could end it)

    @property
    def exact(self) -> bool:
        """Whether each character has its own place (else every span is the whole value)."""
        return self._offsets is not None

    def escaped(self, text: str) -> str | None:
        """``text`` as it must be written inside this string, or None where an edit could
        change more than it says (a line break in a block scalar, any edit of a YAML plain
        scalar)."""
        if self._offsets is None or self._writer is None:
            return None
        return self._writer(text)

    def span(self, start: int, end: int) -> Span:
        """The text span of characters ``start..end`` of the decoded string."""
        offsets = self._offsets
        if offsets is None or end >= len(offsets):
            return self._whole
        return Span(self._whole.start + offsets[start], self._whole.start + offsets[end])


# An escape in a JSON string (or a YAML double-quoted one): a surrogate pair written as two
# \u escapes is one character, any other \u escape six characters long, the others two.
_JSON_ESCAPE = re.compile(r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u.{4}|u.{4}|.)", re.DOTALL)


def _json_offsets(raw: str) -> list[int]:
    """offsets[i] = where decoded character i starts in ``raw`` (which includes the quotes).

    The characters between escapes are counted a run at a time: a Python loop over each
    character of a long prompt cost ~0.4 ms per string placed."""
    offsets: list[int] = []
    at = 1
    for escape in _JSON_ESCAPE.finditer(raw, 1, len(raw) - 1):
        offsets.extend(range(at, escape.start() + 1))
        at = escape.end()
    closing_quote = len(raw) - 1
    offsets.extend(range(at, closing_quote))
    offsets.append(max(at, closing_quote))
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


def value_at(value: object, pointer: str) -> object:
    """The value at a JSON pointer inside ``value``; None where the pointer leads nowhere."""
    for token in pointer.split("/")[1:]:
        if isinstance(value, dict):
            value = value.get(unescape_token(token))
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value


def _json_escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _single_quoted(text: str) -> str | None:
    return text.replace("'", "''") if "\n" not in text else None  # a line break would fold


def _as_is(text: str) -> str | None:
    return text if "\n" not in text else None  # a line break would change the indentation


def _single_quoted_offsets(raw: str) -> list[int]:
    """Offsets of a one-line YAML single-quoted scalar, where ``''`` is one quote."""
    offsets = []
    i = 1
    while i < len(raw) - 1:
        offsets.append(i)
        i += 2 if raw[i] == "'" else 1
    offsets.append(i)
    return offsets
