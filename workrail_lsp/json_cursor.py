"""Tolerant reading of JSON around a cursor, for completion and hover in documents being typed.

The strict parser of the engine judges syntax; this module only answers "where is the cursor?"
(the path of the containers around it, key or value position, the token under it, the sibling
members of its object) in text that may be broken anywhere.

Why line by line: JSON strings cannot contain raw line breaks, so the tokens of a line do not
depend on any other line. Each distinct line text is tokenized once and remembered with a
summary of its brackets; finding the containers around a cursor then skips every line whose
brackets are balanced at the current depth without looking at its tokens. A 1 MB document costs
one tokenization when first seen and a few milliseconds per later look-up.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from workrail_engine.document import LineIndex

from .json_lines import CLOSE, OPEN, Text, Token, text_of

__all__ = ["CursorContext", "Member", "cursor_context", "prime"]


def string_value(token_text: str) -> str:
    """The value of a (possibly unterminated) JSON string token, leniently."""
    body = token_text[1:-1] if len(token_text) > 1 and token_text.endswith('"') else token_text[1:]
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return body


@dataclass(frozen=True, slots=True)
class Member:
    """One member of the object around the cursor, as far as it can be read."""

    key: str
    value: Any  # str/number/bool/None for scalars; "{…}" / "[…]" markers are not decoded
    is_container: bool


@dataclass
class CursorContext:
    """Where a cursor is, in terms of JSON structure.

    ``path`` is the path of the container the cursor is directly in (keys and array positions;
    ``-1`` where a key cannot be read). ``in_key`` is true
    where a property name goes. ``key`` is the member whose value the cursor is in (objects
    only). ``token`` is the span (offsets) of the scalar under the cursor, ``token_text`` its
    text up to the cursor (quotes stripped). ``members`` are the other members of the enclosing
    object, read tolerantly.
    """

    path: tuple[str | int, ...] = ()
    container: str = "root"  # "object" | "array" | "root"
    in_key: bool = False
    key: str | None = None
    in_string: bool = False
    token: tuple[int, int] | None = None
    token_text: str = ""
    token_value: Any = None  # the whole scalar under the cursor, decoded leniently
    members: list[Member] = field(default_factory=list)
    container_start: int | None = None  # offset of the enclosing "{" or "["
    index: int = 0  # in an array: the position of the item at the cursor

    @property
    def value_path(self) -> tuple[str | int, ...]:
        """Path of the value the cursor is in (or would be typing)."""
        if self.container == "object" and not self.in_key and self.key is not None:
            return self.path + (self.key,)
        if self.container == "array":
            return self.path + (self.index,)
        return self.path

    def member(self, key: str) -> Member | None:
        return next((m for m in self.members if m.key == key), None)


def _enclosing_openers(text: Text, line: int, column: int) -> list[tuple[int, int]]:
    """(line, token index) of every unclosed '{' / '[' before the cursor, innermost first."""
    found: list[tuple[int, int]] = []
    pending = 0
    current = line
    summaries = text.summaries
    while current >= 0:
        summary = summaries[current]
        if current != line and pending + summary.back_low >= 0:
            pending -= summary.net
            current -= 1
            continue
        tokens = summary.tokens
        if current == line:
            limit = sum(1 for t in tokens if t.end <= column and not _unterminated_at(t, column))
            tokens = tokens[:limit]
        for index in range(len(tokens) - 1, -1, -1):
            mark = tokens[index].text
            if mark in CLOSE:
                pending += 1
            elif mark in OPEN:
                if pending == 0:
                    found.append((current, index))
                else:
                    pending -= 1
        current -= 1
    return found


def _unterminated_at(token: Token, column: int) -> bool:
    # A string token that ends exactly at the cursor without its closing quote is being typed.
    return token.text[0] == '"' and token.end == column and not _closed(token.text)


def _closed(token_text: str) -> bool:
    if len(token_text) < 2 or not token_text.endswith('"'):
        return False
    backslashes = len(token_text) - 1 - len(token_text[:-1].rstrip("\\"))
    return backslashes % 2 == 0


def _tokens_before(text: Text, line: int, index: int, count: int) -> list[Token]:
    """Up to ``count`` tokens before (line, index), nearest first."""
    out: list[Token] = []
    while line >= 0 and len(out) < count:
        tokens = text.line(line).tokens
        for position in range(min(index, len(tokens)) - 1, -1, -1):
            out.append(tokens[position])
            if len(out) == count:
                break
        line -= 1
        index = 1 << 30
    return out


def _key_of(text: Text, line: int, index: int) -> str | int:
    before = _tokens_before(text, line, index, 2)
    if len(before) == 2 and before[0].text == ":" and before[1].kind == "s":
        return string_value(before[1].text)
    return -1


def prime(index: LineIndex) -> None:
    """Tokenize every line of a text ahead of the first completion (a newly opened big file)."""
    text_of(index)


def cursor_context(index: LineIndex, offset: int, count_items: bool = True) -> CursorContext:
    """Describe the structure around ``offset`` in the text behind ``index``.

    ``count_items=False`` leaves array positions at ``-1``: counting the items before the cursor
    reads every earlier sibling, which completion (schema by path, not by value) does not need.
    """
    offset = max(0, min(offset, len(index.text)))
    line = index.line_of(offset)
    column = offset - index.starts[line]
    text = text_of(index)
    openers = _enclosing_openers(text, line, column)
    context = CursorContext()
    if not openers:
        _fill_token(context, text, line, column)
        return context
    outermost_first = openers[::-1]
    path: list[str | int] = []
    for (parent_line, parent_index), (open_line, open_index) in zip(
        outermost_first, outermost_first[1:], strict=False
    ):
        parent_kind = text.line(parent_line).tokens[parent_index].text
        if parent_kind == "{":
            path.append(_key_of(text, open_line, open_index))
        else:
            item_column = text.line(open_line).tokens[open_index].start
            path.append(
                _items_before(text, (parent_line, parent_index), (open_line, item_column))
                if count_items
                else -1
            )
    inner_line, inner_index = openers[0]
    inner = text.line(inner_line).tokens[inner_index]
    context.path = tuple(path)
    context.container = "object" if inner.text == "{" else "array"
    context.container_start = text.offset(inner_line, inner.start)
    _read_container(context, text, (inner_line, inner_index), (line, column))
    if context.container == "array":
        context.index = (
            _items_before(text, (inner_line, inner_index), (line, column)) if count_items else -1
        )
    _fill_token(context, text, line, column)
    return context


def _fill_token(context: CursorContext, text: Text, line: int, column: int) -> None:
    for token in text.line(line).tokens:
        if token.start < column <= token.end or (token.start == column and token.kind in "sv"):
            if token.kind not in "sv":
                continue
            if (
                token.kind == "s"
                and token.end == column
                and _closed(token.text)
                and token.start != column
            ):
                continue  # just after a closing quote: not inside the string
            context.token = (text.offset(line, token.start), text.offset(line, token.end))
            context.in_string = token.kind == "s"
            typed = token.text[: column - token.start]
            context.token_text = typed[1:] if context.in_string else typed
            context.token_value = _scalar(token.text)
            return


def _walk(text: Text, opener: tuple[int, int]) -> Iterator[tuple[int, Token]]:
    """Tokens directly inside the container at ``opener`` (nested containers: only their opener).

    Stops at the container's closer or the end of the text. Lines lying entirely inside a nested
    container are skipped by their summary.
    """
    line, start = opener
    depth = 0
    summaries = text.summaries
    while line < len(summaries):
        summary = summaries[line]
        if depth > 0 and line != opener[0] and depth + summary.ahead_low > 0:
            depth += summary.net
            line += 1
            continue
        for position in range(start + 1 if line == opener[0] else 0, len(summary.tokens)):
            token = summary.tokens[position]
            if token.text in OPEN:
                if depth == 0:
                    yield line, token
                depth += 1
            elif token.text in CLOSE:
                if depth == 0:
                    return
                depth -= 1
            elif depth == 0:
                yield line, token
        line += 1


def _items_before(text: Text, opener: tuple[int, int], limit: tuple[int, int]) -> int:
    """The index of the array item at ``limit`` (line, column): commas directly inside, before it."""
    count = 0
    for line, token in _walk(text, opener):
        if (line, token.start) >= limit:
            break
        if token.text == ",":
            count += 1
    return count


def _read_container(
    context: CursorContext, text: Text, opener: tuple[int, int], cursor: tuple[int, int]
) -> None:
    """Read the members of the container at ``opener``, noting the cursor's role among them."""
    reader = _MemberReader(context.container == "object")
    cursor_seen = False
    for line, token in _walk(text, opener):
        if not cursor_seen and (line, token.start) >= cursor:
            cursor_seen = True
            reader.mark_cursor(context)
        if token.text in OPEN:
            reader.value(token.text, container=True)
        else:
            reader.feed(token)
    if not cursor_seen:
        reader.mark_cursor(context)
    context.members = reader.members


class _MemberReader:
    """A forgiving state machine over the depth-0 tokens of one container."""

    def __init__(self, is_object: bool) -> None:
        self.is_object = is_object
        self.members: list[Member] = []
        self.key: str | None = None
        self.after_colon = False
        self.has_value = False

    def feed(self, token: Token) -> None:
        kind = token.kind
        if kind == ",":
            self.key, self.after_colon, self.has_value = None, False, False
        elif kind == ":":
            self.after_colon = True
        elif not self.is_object:
            return
        elif kind == "s" and (not self.after_colon or self.has_value):
            self.key, self.after_colon, self.has_value = string_value(token.text), False, False
        else:
            self.value(token.text, container=False)

    def value(self, raw: str, container: bool) -> None:
        if self.is_object and self.key is not None and not self.has_value:
            self.members.append(Member(self.key, raw if container else _scalar(raw), container))
            self.has_value = True

    def mark_cursor(self, context: CursorContext) -> None:
        if not self.is_object:
            return
        if self.after_colon:
            context.key = self.key
        else:
            context.in_key = True


def _scalar(raw: str) -> Any:
    if raw.startswith('"'):
        return string_value(raw)
    try:
        return json.loads(raw)
    except ValueError:
        return raw
