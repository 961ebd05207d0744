"""Line-by-line token summaries of a text, reused from one version of a document to the next.

JSON strings cannot contain raw line breaks, so the tokens of a line do not depend on any other
line. Each distinct line text is tokenized once (a cache keyed by the line's text) and summarized
by its bracket balance. A new version of a document reuses the summaries of the lines an edit did
not touch (found from the common prefix and suffix of the two texts), so typing in a 1 MB file
re-reads a few lines, not 40,000.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from workrail_engine.document import LineIndex

__all__ = ["CLOSE", "OPEN", "Line", "Text", "Token", "text_of"]

_TOKEN = re.compile(r'"(?:[^"\\\r\n]|\\.)*"?|[{}\[\]:,]|[^\s{}\[\]:,"]+')
OPEN = {"{": "}", "[": "]"}
CLOSE = {"}": "{", "]": "["}
_CACHE_LIMIT = 200_000
_BREAKS = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Token:
    start: int  # column in the line (code points)
    end: int
    text: str

    @property
    def kind(self) -> str:
        first = self.text[0]
        if first in "{}[]:,":
            return first
        return "s" if first == '"' else "v"


@dataclass(frozen=True, slots=True)
class Line:
    tokens: tuple[Token, ...]
    net: int  # openers minus closers
    back_low: int  # lowest running (closers - openers) read from the end; 0 if never negative
    ahead_low: int  # lowest running (openers - closers) read from the start


_lines: dict[str, Line] = {}


def _summarize(text: str) -> Line:
    found = _lines.get(text)
    if found is not None:
        return found
    tokens = tuple(Token(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text))
    net = ahead_low = 0
    for token in tokens:
        if token.text in OPEN:
            net += 1
        elif token.text in CLOSE:
            net -= 1
        ahead_low = min(ahead_low, net)
    back = back_low = 0
    for token in reversed(tokens):
        if token.text in CLOSE:
            back += 1
        elif token.text in OPEN:
            back -= 1
        back_low = min(back_low, back)
    summary = Line(tokens, net, back_low, ahead_low)
    if len(_lines) > _CACHE_LIMIT:
        _lines.clear()
    _lines[text] = summary
    return summary


class Text:
    """The summaries of every line of one text version, split on the breaks LineIndex uses."""

    def __init__(self, index: LineIndex, summaries: list[Line]) -> None:
        self.index = index
        self.summaries = summaries

    def line(self, number: int) -> Line:
        return self.summaries[number]

    def offset(self, line: int, column: int) -> int:
        return self.index.starts[line] + column


def _all_lines(raw: str) -> list[Line]:
    lines = _BREAKS.split(raw) if "\r" in raw else raw.split("\n")
    get = _lines.get
    return [get(line) or _summarize(line) for line in lines]


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, compared in C: whole blocks first, then a binary search."""
    limit = min(len(a), len(b))
    block = 1 << 16
    start = 0
    while start < limit and a[start : start + block] == b[start : start + block]:
        start += block
    low, high = start, min(start + block, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[start:middle] == b[start:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _reused_lines(previous: Text, raw: str) -> list[Line] | None:
    """The new version's summaries from the previous one's, re-reading only the edited lines."""
    old = previous.index.text
    if "\r" in old or "\r" in raw:
        return None
    prefix = _common_prefix(old, raw)
    room = min(len(old), len(raw)) - prefix
    suffix = min(_common_prefix(old[::-1], raw[::-1]), room)
    first = old.count("\n", 0, prefix)
    tail = old.count("\n", len(old) - suffix)  # lines lying wholly inside the common suffix
    start = raw.rfind("\n", 0, prefix) + 1
    end = raw.find("\n", len(raw) - suffix) if tail else len(raw)
    middle = raw[start:end].split("\n")
    kept = previous.summaries
    summaries = (
        kept[:first]
        + [_lines.get(line) or _summarize(line) for line in middle]
        + kept[len(kept) - tail :]
    )
    return summaries if len(summaries) == raw.count("\n") + 1 else None


_texts: WeakKeyDictionary[LineIndex, Text] = WeakKeyDictionary()
_latest: list[Text] = []  # the most recently built Text: typing makes the next version from it


def text_of(index: LineIndex) -> Text:
    found = _texts.get(index)
    if found is not None:
        return found
    summaries = _reused_lines(_latest[0], index.text) if _latest else None
    found = _texts[index] = Text(
        index, summaries if summaries is not None else _all_lines(index.text)
    )
    _latest[:] = [found]
    return found
