"""Where an offset is in a document's structure, for completion and hover while the author types:
the container around it, whether a key or a value goes there, the scalar under it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .tolerant_scalars import scalar_value
from .tolerant_tree import ABSENT, Member, Node, members_near, touches

if TYPE_CHECKING:
    from .tolerant_document import TolerantDocument

__all__ = ["CursorContext", "cursor_context"]


@dataclass
class CursorContext:
    """Where an offset is, in terms of the document's structure.

    ``path`` is the path of the container the cursor is directly in (keys and array positions).
    ``in_key`` is true where a property name goes. ``key`` is the member whose value the cursor
    is in (objects only). ``token`` is the span of the scalar under the cursor, ``token_text`` its
    text up to the cursor (quotes stripped), ``token_value`` the whole scalar decoded.
    ``members`` are the members of the enclosing object as far as they can be read;
    ``parent_members``, in an array that is a member's value, those of the object holding it
    (the ``var`` beside an ``in`` list).
    """

    path: tuple[str | int, ...] = ()
    container: str = "root"  # "object" | "array" | "root"
    in_key: bool = False
    key: str | None = None
    in_string: bool = False
    token: tuple[int, int] | None = None
    token_text: str = ""
    token_value: Any = None
    members: list[Member] = field(default_factory=list)
    parent_members: list[Member] = field(default_factory=list)
    container_start: int | None = None
    index: int = 0  # in an array: the position of the item at the cursor
    indent: str = ""  # YAML: the indentation of the line being typed (for multi-line inserts)

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

    def parent_member(self, key: str) -> Member | None:
        return next((m for m in self.parent_members if m.key == key), None)

    def partial_object(self) -> dict[str, Any]:
        """The enclosing object as far as it can be read; nested containers as empty stand-ins."""
        out: dict[str, Any] = {}
        for m in self.members:
            if m.node is None:
                continue
            if m.node.kind == "object":
                out[m.key] = {}
            elif m.node.kind == "array":
                out[m.key] = []
            else:
                out[m.key] = m.node.value
        return out


_Chain = list[tuple[str | int | None, Node]]


def cursor_context(document: TolerantDocument, offset: int) -> CursorContext:
    """Describe the structure around ``offset`` (see ``CursorContext``)."""
    offset = max(0, min(offset, len(document.text)))
    context = CursorContext()
    chain = [c for c in document.node_at(offset) if c[1].is_container]
    if document.format == "yaml":
        chain = _yaml_chain(document, chain, offset, context)
    if not chain:
        return context
    path: list[str | int] = []
    for step, _node in chain[1:]:
        path.append(step if step is not None else -1)
    container = chain[-1][1]
    context.path = tuple(path)
    context.container = container.kind
    context.container_start = container.start
    if container.kind == "object":
        context.members = container.members
        _object_cursor(document, context, container, offset)
    else:
        if len(chain) > 1 and chain[-2][1].kind == "object":
            context.parent_members = chain[-2][1].members
        _array_cursor(document, context, container, offset)
    return context


def _object_cursor(
    document: TolerantDocument, context: CursorContext, node: Node, offset: int
) -> None:
    text = document.text
    for member in members_near(node.members, offset):
        if member.key_start <= offset <= member.key_end and not (
            offset == member.key_end and _closed_quote_before(text, offset, member.key_start)
        ):
            context.in_key = True
            _token(document, context, member.key_start, member.key_end, offset, member.key)
            return
        if member.node is not None and touches(member.node, offset):
            context.key = member.key
            if not member.node.is_container and not (
                offset == member.node.end and _closed_quote_before(text, offset, member.node.start)
            ):
                _token(document, context, member.node.start, member.node.end, offset)
            return
    if document.format == "yaml":
        context.in_key = True
        word = _word_around(text, offset)
        if word is not None:
            _token(document, context, word[0], word[1], offset, text[word[0] : word[1]])
        return
    colon = offset  # just past the last character before the cursor that is not whitespace
    while colon > 0 and text[colon - 1].isspace():
        colon -= 1
    if colon > 0 and text[colon - 1] == ":":
        owner = next((m for m in node.members if m.colon == colon), None)
        if owner is not None:
            context.key = owner.key
            return
    context.in_key = True


def _array_cursor(
    document: TolerantDocument, context: CursorContext, node: Node, offset: int
) -> None:
    items = node.items
    index = 0
    for position, item in enumerate(items):
        if item.end <= offset and not touches(item, offset):
            index = position + 1
        elif touches(item, offset):
            index = position
            if not item.is_container:
                _token(document, context, item.start, item.end, offset)
            break
        else:
            break
    if document.format == "json" and index < len(items) and items[index].start > offset:
        # Between two items: past a comma the next index, before it the previous item.
        between = document.text[items[index - 1].end if index else node.start + 1 : offset]
        if index and "," not in between:
            index -= 1
    context.index = index


def _token(
    document: TolerantDocument,
    context: CursorContext,
    start: int,
    end: int,
    offset: int,
    value: Any = ABSENT,
) -> None:
    raw = document.text[start:end]
    context.token = (start, end)
    quoted = raw[:1] in ('"', "'")
    context.in_string = quoted or (document.format == "yaml" and not context.in_key)
    typed = raw[: offset - start]
    context.token_text = typed[1:] if quoted else typed
    context.token_value = value if value is not ABSENT else scalar_value(raw, document.format)


def _closed_quote_before(text: str, offset: int, start: int) -> bool:
    """Just after a closing quote: the cursor is past the string, not in it."""
    raw = text[start:offset]
    return len(raw) >= 2 and raw[0] in "\"'" and raw[-1] == raw[0]


def _yaml_chain(
    document: TolerantDocument, chain: _Chain, offset: int, context: CursorContext
) -> _Chain:
    """YAML blocks are found by indentation: the container a cursor is in is the one whose
    keys (or dashes) line up with the line being typed, which spans alone cannot tell on a
    line that holds nothing yet."""
    text = document.text
    line_start = text.rfind("\n", 0, offset) + 1
    line = text[line_start:offset]
    stripped = line.lstrip(" ")
    column = len(line) - len(stripped)
    while stripped.startswith("- ") or stripped == "-":
        stripped = stripped[2:].lstrip(" ") if stripped != "-" else ""
        column = len(line) - len(stripped)
    context.indent = " " * column
    root = document.root
    if root is None or not root.is_container:
        return [(None, _empty_object(offset))] if not text.strip() else chain
    chain = [(None, root)]
    node = root
    while True:
        if node.kind == "object":
            if node.column >= column and node.members:
                break
            last = _last_before(node.members, line_start)
            if last is None:
                break
            if last.node is not None and last.node.is_container:
                chain.append((last.key, last.node))
                node = last.node
                continue
            if last.node is None or last.node.start >= line_start:
                # ``key:`` then a nested line: the value being typed is a new object.
                if last.key_start < line_start:
                    chain.append((last.key, _empty_object(offset)))
            break
        elif node.kind == "array":
            if node.column >= column and not line.lstrip(" ").startswith("-"):
                break
            position = max(
                (i for i, item in enumerate(node.items) if item.start <= offset), default=-1
            )
            if position < 0:
                break
            item = node.items[position]
            if item.is_container:
                chain.append((position, item))
                node = item
                continue
            if not stripped and line.rstrip().endswith("-"):
                # Just after "- ": a new item, whose keys are what gets typed next.
                chain.append((position, _empty_object(offset)))
            break
        else:
            break
    return chain


def _empty_object(offset: int) -> Node:
    """The object a cursor on a line with nothing typed yet is about to fill."""
    return Node("object", offset, offset, _members=[], _items=[], _value={})


def _last_before(members: list[Member], offset: int) -> Member | None:
    found = None
    for member in members:
        if member.key_start < offset:
            found = member
    return found


_WORD = re.compile(r"[^\s:#,\[\]{}]+")


def _word_around(text: str, offset: int) -> tuple[int, int] | None:
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    for match in _WORD.finditer(line):
        if match.start() + line_start <= offset <= match.end() + line_start:
            if match.group() == "-":
                continue
            return match.start() + line_start, match.end() + line_start
    return None
