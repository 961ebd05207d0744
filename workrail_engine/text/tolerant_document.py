"""A tolerant tree of a workflow text (JSON or YAML), for the features that run while an author types.

The strict parse (``document.parse_document``) judges syntax and feeds the diagnostics; it has no
tree while the text is broken. This module recovers one anyway: tree-sitter's JSON and YAML
grammars (error-recovering, incremental) give a concrete tree, and the few shapes they leave as
``ERROR`` (an unclosed object, a key without a value, a missing comma) are reassembled here by a
small stack machine. The result is the same view for both formats: objects with members (key,
key span, value node), arrays with items, scalars with their decoded value, every node with its
span in character offsets, and a recovered value for the whole document.

Nothing here decides whether the text is valid: a recovered tree never hides a syntax error,
because the diagnostics never read it.

Costs on a 1 MB JSON workflow: a full parse ≈ 60 ms, a re-parse after a one-character edit
(``edited``) ≈ 1 ms; nodes are materialized lazily, so reading the steps for an outline touches
the step level only, and the recovered value decodes each error-free subtree with ``json.loads``.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..diagnostics import Span
from ..limits import MAX_YAML_BLOCK_LEVELS, MAX_YAML_TREE_LINES
from .json_pointer import escape_token, unescape_token
from .pointer_spans import PointerSpans

__all__ = [
    "CursorContext",
    "Member",
    "Node",
    "TolerantDocument",
    "parse_tolerant",
    "tree_sitter_refusal",
    "yaml_block_levels",
]

_ABSENT: Any = object()


def _parser(fmt: str) -> Any:
    """One tree-sitter parser per format, created on first use (the import costs ~10 ms)."""
    found = _PARSERS.get(fmt)
    if found is None:
        from tree_sitter import Language, Parser

        if fmt == "yaml":
            import tree_sitter_yaml as grammar
        else:
            import tree_sitter_json as grammar  # type: ignore[no-redef]
        found = _PARSERS[fmt] = Parser(Language(grammar.language()))
    return found


_PARSERS: dict[str, Any] = {}

# A YAML line's indentation, then the block indicators that open a collection on the same line
# ("- - x", "? - x", ": - x").
_YAML_LINE_START = re.compile(r"( *)((?:[-?:](?: +|$))*)")
_YAML_INDICATOR = re.compile(r"[-?:](?: +|$)")
# Every character a line's indentation and indicators can be made of, from each line's start.
_YAML_LINE_PREFIX = re.compile(r"^[ ?:-]*", re.MULTILINE)


def yaml_block_levels(text: str) -> int:
    """The most block indentation levels open at once in a YAML text, never fewer than
    tree-sitter-yaml's scanner holds (see ``limits.MAX_YAML_BLOCK_LEVELS``).

    The levels open at once sit at different columns, each one where a line's indentation or one
    of its leading block indicators ends; so the number of such columns in the whole text bounds
    them, and it is found from the text's few distinct line prefixes (~1 ms on 30,000 lines).
    Only when that bound is over the limit are the lines walked: each non-blank line closes the
    levels deeper than its indentation and opens one at its indentation and one after each
    indicator it starts with. Lines inside block scalars, quoted strings and flow collections
    count as structure: they can only raise the figure, never hide a level the scanner opens.
    """
    if "\r" in text:  # YAML's other line breaks, as the scanner reads them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    columns: set[int] = set()
    for prefix in set(_YAML_LINE_PREFIX.findall(text)):
        columns.update(_opened_columns(prefix))
    if len(columns) <= MAX_YAML_BLOCK_LEVELS:
        return len(columns)
    open_columns: list[int] = []
    deepest = 0
    for line in text.split("\n"):
        start = _YAML_LINE_START.match(line)
        assert start is not None  # the pattern matches the empty string
        rest = line[start.end() :].lstrip()
        if not start.group(2) and (not rest or rest.startswith("#")):
            continue  # blank and comment lines leave the levels as they are
        indent, *opened = _opened_columns(line)
        while open_columns and open_columns[-1] > indent:
            open_columns.pop()
        if not open_columns or open_columns[-1] < indent:
            open_columns.append(indent)
        open_columns.extend(opened)
        deepest = max(deepest, len(open_columns))
    return deepest


def _opened_columns(line: str) -> list[int]:
    """The columns where a line's indentation and each of its leading block indicators end."""
    start = _YAML_LINE_START.match(line)
    assert start is not None
    indent = len(start.group(1))
    return [indent, *(indent + m.end() for m in _YAML_INDICATOR.finditer(start.group(2)))]


def tree_sitter_refusal(text: str, fmt: str) -> str | None:
    """Why tree-sitter must not parse this text (None: it may). Only YAML is ever refused:
    tree-sitter-yaml crashes the process past ``MAX_YAML_BLOCK_LEVELS`` and loses its place past
    ``MAX_YAML_TREE_LINES``."""
    if fmt != "yaml":
        return None
    lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    if lines > MAX_YAML_TREE_LINES:
        return (
            f"{lines:,} lines (tree-sitter's YAML grammar places at most {MAX_YAML_TREE_LINES:,})"
        )
    levels = yaml_block_levels(text)
    if levels > MAX_YAML_BLOCK_LEVELS:
        return f"{levels} indentation levels open at once (the limit is {MAX_YAML_BLOCK_LEVELS})"
    return None


class _Offsets:
    """tree-sitter's byte offsets and (row, byte column) points ↔ character offsets."""

    def __init__(self, text: str, data: bytes) -> None:
        self.text = text
        self.data = data
        self.ascii = len(data) == len(text)

    @cached_property
    def char_rows(self) -> list[int]:
        return [0] + [m.end() for m in re.finditer("\n", self.text)]

    @cached_property
    def byte_rows(self) -> list[int]:
        return (
            self.char_rows if self.ascii else [0] + [m.end() for m in re.finditer(b"\n", self.data)]
        )

    def char(self, byte: int) -> int:
        if self.ascii:
            return byte
        row = bisect_right(self.byte_rows, byte) - 1
        start = self.byte_rows[row]
        return self.char_rows[row] + len(self.data[start:byte].decode("utf-8", "replace"))

    def byte(self, char: int) -> int:
        if self.ascii:
            return char
        row = bisect_right(self.char_rows, char) - 1
        start = self.char_rows[row]
        return self.byte_rows[row] + len(self.text[start:char].encode("utf-8", "surrogatepass"))

    def point(self, char: int) -> tuple[int, int]:
        # Counted in C on demand: building every row start would cost ~10 ms per 1 MB version.
        text = self.text
        row = text.count("\n", 0, char)
        line_start = text.rfind("\n", 0, char) + 1
        if self.ascii:
            return row, char - line_start
        return row, len(text[line_start:char].encode("utf-8", "surrogatepass"))


@dataclass(eq=False)
class Member:
    """One member of an object: its key, where the key is, and its value (``None`` if not typed yet)."""

    key: str
    key_start: int
    key_end: int
    node: Node | None
    colon: int | None = None  # offset just after the ':' when there is one

    @property
    def start(self) -> int:
        return self.key_start

    @property
    def end(self) -> int:
        return self.node.end if self.node is not None else (self.colon or self.key_end)


@dataclass(eq=False)
class Node:
    """One value of the tolerant tree.

    ``kind`` is ``object``, ``array``, ``string``, ``number``, ``boolean``, ``null`` or ``other``
    (a YAML alias, a bare word in JSON). ``closed`` is false for a container or string whose
    closer is missing. ``content_start``/``content_end`` is a scalar's text without quotes;
    ``exact`` says that text *is* the value (no escapes, no folding), so it can be edited in place.
    """

    kind: str
    start: int
    end: int
    closed: bool = True
    content_start: int = 0
    content_end: int = 0
    exact: bool = False
    column: int = 0  # YAML: the column of a block container's keys or dashes
    _members: list[Member] | None = field(default=None, repr=False)
    _items: list[Node] | None = field(default=None, repr=False)
    _value: Any = field(default=_ABSENT, repr=False)
    _ts: Any = field(default=None, repr=False)
    _tree: TolerantDocument | None = field(default=None, repr=False)

    @property
    def is_container(self) -> bool:
        return self.kind in ("object", "array")

    @property
    def members(self) -> list[Member]:
        if self._members is None:
            self._members = self._tree._members_of(self) if self._tree and self._ts else []
        return self._members

    @property
    def items(self) -> list[Node]:
        if self._items is None:
            self._items = self._tree._items_of(self) if self._tree and self._ts else []
        return self._items

    def member(self, key: str) -> Member | None:
        """The member named ``key`` (the last one, as every JSON reader keeps the last duplicate)."""
        if self._members is None and self._tree is not None and self._ts is not None:
            # One member of a well-formed JSON object: compare key bytes, build only that member
            # (reading one id from each of 2,800 steps must not build all their members).
            found = self._tree._find_member(self, key)
            if found is not _ABSENT:
                return found  # type: ignore[no-any-return]
        return self._member_index.get(key)

    @cached_property
    def _member_index(self) -> dict[str, Member]:
        index: dict[str, Member] = {}
        for m in self.members:  # a key still being typed does not hide a complete one
            if m.node is not None or m.key not in index:
                index[m.key] = m
        return index

    @property
    def value(self) -> Any:
        if self._value is _ABSENT:
            self._value = self._tree._value_of(self) if self._tree is not None else None
        return self._value


@dataclass
class CursorContext:
    """Where an offset is, in terms of the document's structure.

    ``path`` is the path of the container the cursor is directly in (keys and array positions).
    ``in_key`` is true where a property name goes. ``key`` is the member whose value the cursor
    is in (objects only). ``token`` is the span of the scalar under the cursor, ``token_text`` its
    text up to the cursor (quotes stripped), ``token_value`` the whole scalar decoded.
    ``members`` are the members of the enclosing object as far as they can be read.
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


_Spans = dict[str, tuple[tuple[int, int] | None, tuple[int, int]]]


class TolerantDocument(PointerSpans):
    """The tolerant tree of one text version. ``strict_value``: the strict parse's value, if any
    (it is the recovered value then, so valid documents decode once). ``strict_spans``: the
    strict YAML parse's key and value span of every pointer, from which the tree is built when
    tree-sitter must not parse the text (``refusal`` says why; ``tree`` is then None)."""

    def __init__(
        self,
        text: str,
        fmt: str,
        strict_value: Any = _ABSENT,
        tree: Any = None,
        path: str | None = None,
        strict_spans: _Spans | None = None,
    ) -> None:
        self.text = text
        self.path = path
        self.format = fmt
        self.data = text.encode("utf-8", "surrogatepass")
        self.offsets = _Offsets(text, self.data)
        self.refusal = None if tree is not None else tree_sitter_refusal(text, fmt)
        if tree is None and self.refusal is None:
            tree = _parser(fmt).parse(self.data)
        self.tree = tree
        self._strict_value = strict_value
        self._strict_spans = strict_spans

    # -- the tree -------------------------------------------------------------------------------
    @cached_property
    def root(self) -> Node | None:
        if self.tree is None:
            return self._strict_root()
        top = self.tree.root_node
        if self.format == "yaml":
            return self._yaml_root(top)
        values = (
            [c for c in top.named_children if c.type != "comment"]
            if top.type == "document"
            else [top]
        )
        if not values:
            return None
        if len(values) == 1 and values[0].type != "ERROR":
            return self._json_node(values[0])
        return _assemble(self, _flatten_json(values), "root")

    @property
    def has_errors(self) -> bool:
        """tree-sitter found something to recover from (not a judge of validity: see module doc)."""
        return self.tree is not None and bool(self.tree.root_node.has_error)

    @cached_property
    def value(self) -> Any:
        if self._strict_value is not _ABSENT and self._strict_value is not None:
            return self._strict_value
        root = self.root
        return root.value if root is not None else None

    def edited(self, start: int, end: int, new_text: str) -> TolerantDocument:
        """This tree after ``text[start:end]`` was replaced by ``new_text``: an incremental re-parse."""
        text = self.text[:start] + new_text + self.text[end:]
        if self.tree is None or (
            self._may_change_levels(start, end, new_text)
            and tree_sitter_refusal(text, self.format) is not None
        ):
            return TolerantDocument(text, self.format, path=self.path)
        start_byte, old_end_byte = self.offsets.byte(start), self.offsets.byte(end)
        start_point, old_end_point = self.offsets.point(start), self.offsets.point(end)
        added = new_text.encode("utf-8", "surrogatepass")
        lines = added.split(b"\n")
        new_end_point = (
            (start_point[0], start_point[1] + len(added))
            if len(lines) == 1
            else (start_point[0] + len(lines) - 1, len(lines[-1]))
        )
        old = self.tree.copy() if hasattr(self.tree, "copy") else self.tree
        old.edit(
            start_byte=start_byte,
            old_end_byte=old_end_byte,
            new_end_byte=start_byte + len(added),
            start_point=start_point,
            old_end_point=old_end_point,
            new_end_point=new_end_point,
        )
        data = text.encode("utf-8", "surrogatepass")
        tree = _parser(self.format).parse(data, old)
        return TolerantDocument(text, self.format, tree=tree, path=self.path)

    def _may_change_levels(self, start: int, end: int, new_text: str) -> bool:
        """Whether an edit can change what ``tree_sitter_refusal`` counts: the lines, or a line's
        indentation and indicators (typing inside a value changes neither, and skips the count)."""
        if self.format != "yaml":
            return False
        breaks = ("\n", "\r")
        if any(b in new_text for b in breaks) or any(b in self.text[start:end] for b in breaks):
            return True
        line_start = max(self.text.rfind(b, 0, start) for b in breaks) + 1
        return not self.text[line_start:start].strip(" ?:-")

    def with_strict_value(self, value: Any, spans: _Spans | None = None) -> TolerantDocument:
        """The same tree, told the strict parse's value (when the text turned out to be valid)
        and, for YAML, its spans."""
        if value is not None and "value" not in self.__dict__:
            self._strict_value = value
        if spans is not None and "root" not in self.__dict__:
            self._strict_spans = spans
        return self

    # -- the tree from the strict parse (YAML that tree-sitter must not parse) ----------------
    def _strict_root(self) -> Node | None:
        value, spans = self._strict_value, self._strict_spans
        if value is _ABSENT or value is None or not spans or "" not in spans:
            return None
        return self._strict_node(value, "", spans)

    def _strict_node(self, value: Any, pointer: str, spans: _Spans) -> Node:
        start, end = spans[pointer][1]
        text = self.text
        if end < len(text):  # PyYAML ends a block where the next token starts; tree-sitter before
            while end > start and text[end - 1] in " \t\r\n":
                end -= 1
        column = start - (text.rfind("\n", 0, start) + 1)
        if isinstance(value, dict):
            members = []
            for key, child in value.items():
                at = f"{pointer}/{escape_token(str(key))}"
                key_span = spans[at][0] if at in spans else None
                if key_span is None:
                    continue  # a key PyYAML wrote differently (``yes`` read as True)
                colon = self.text.find(":", key_span[1], spans[at][1][0] + 1)
                node = self._strict_node(child, at, spans)
                members.append(Member(str(key), *key_span, node, colon + 1 if colon >= 0 else None))
            return Node(
                "object", start, end, column=column, _members=members, _items=[], _value=value
            )
        if isinstance(value, list):
            items = [
                self._strict_node(child, f"{pointer}/{index}", spans)
                for index, child in enumerate(value)
                if f"{pointer}/{index}" in spans
            ]
            return Node("array", start, end, column=column, _members=[], _items=items, _value=value)
        kind = (
            "boolean"
            if isinstance(value, bool)
            else "number"
            if isinstance(value, int | float)
            else "string"
            if isinstance(value, str)
            else "null"
            if value is None
            else "other"
        )
        return Node(kind, start, end, True, start, end, False, _value=value)

    # -- pointers -------------------------------------------------------------------------------
    def locate(self, pointer: str) -> tuple[Member | None, Node] | None:
        """The member (for object members) and the node a JSON pointer names, if present."""
        node = self.root
        member: Member | None = None
        if node is None:
            return None
        if not pointer:
            return None, node
        for raw in pointer.split("/")[1:]:
            part = unescape_token(raw)
            if node.kind == "object":
                member = node.member(part)
                if member is None or member.node is None:
                    return None
                node = member.node
            elif node.kind == "array" and part.isdigit() and int(part) < len(node.items):
                member = None
                node = node.items[int(part)]
            else:
                return None
        return member, node

    def value_span(self, pointer: str) -> Span | None:
        found = self.locate(pointer)
        return Span(found[1].start, found[1].end) if found else None

    def key_span(self, pointer: str) -> Span | None:
        found = self.locate(pointer)
        if found is None or found[0] is None:
            return None
        return Span(found[0].key_start, found[0].key_end)

    def node_at(self, offset: int) -> list[tuple[str | int | None, Node]]:
        """The chain of nodes containing ``offset``, outermost first, each with its key or index."""
        chain: list[tuple[str | int | None, Node]] = []
        node = self.root
        step: str | int | None = None
        while node is not None and _contains(node, offset):
            chain.append((step, node))
            child: Node | None = None
            if node.kind == "object":
                for member in _near(node.members, offset):
                    if member.node is not None and _contains(member.node, offset):
                        step, child = member.key, member.node
                        break
            elif node.kind == "array":
                found = self._item_at(node, offset) if node._items is None else _ABSENT
                if found is None:
                    break
                if found is not _ABSENT:
                    step, child = found
                else:
                    for index, item in _near_items(node.items, offset):
                        if _contains(item, offset):
                            step, child = index, item
                            break
            node = child
        return chain

    def _item_at(self, node: Node, offset: int) -> Any:
        """The (index, item) of a JSON array holding ``offset``, or None, without building the
        other items (a new tree version would otherwise build 2,800 step nodes for one look-up);
        ``_ABSENT`` where this shortcut does not apply (errors or comments in the array)."""
        ts = node._ts
        if self.format != "json" or ts is None or ts.has_error:
            return _ABSENT
        data, start, end = self.data, ts.start_byte, ts.end_byte
        if data.find(b"//", start, end) >= 0 or data.find(b"/*", start, end) >= 0:
            return _ABSENT  # comments are children too: positions would not be (i - 1) / 2
        walker = ts.walk()
        position = walker.goto_first_child_for_byte(self.offsets.byte(offset))
        if position is None or position % 2 == 0:  # "[", "," or "]": between items
            return None
        item = self._json_node(walker.node)
        return ((position - 1) // 2, item) if _contains(item, offset) else None

    # -- the cursor -----------------------------------------------------------------------------
    def cursor(self, offset: int) -> CursorContext:
        """Describe the structure around ``offset`` (see ``CursorContext``)."""
        offset = max(0, min(offset, len(self.text)))
        context = CursorContext()
        chain = [c for c in self.node_at(offset) if c[1].is_container]
        if self.format == "yaml":
            chain = self._yaml_chain(chain, offset, context)
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
            self._object_cursor(context, container, offset)
        else:
            self._array_cursor(context, container, offset)
        return context

    def _object_cursor(self, context: CursorContext, node: Node, offset: int) -> None:
        for member in _near(node.members, offset):
            if member.key_start <= offset <= member.key_end and not (
                offset == member.key_end and self._closed_quote_before(offset, member.key_start)
            ):
                context.in_key = True
                self._token(context, member.key_start, member.key_end, offset, member.key)
                return
            if member.node is not None and _touches(member.node, offset):
                context.key = member.key
                if not member.node.is_container and not (
                    offset == member.node.end
                    and self._closed_quote_before(offset, member.node.start)
                ):
                    self._token(context, member.node.start, member.node.end, offset)
                return
        if self.format == "yaml":
            context.in_key = True
            word = _word_around(self.text, offset)
            if word is not None:
                self._token(context, word[0], word[1], offset, self.text[word[0] : word[1]])
            return
        colon = offset  # just past the last character before the cursor that is not whitespace
        while colon > 0 and self.text[colon - 1].isspace():
            colon -= 1
        if colon > 0 and self.text[colon - 1] == ":":
            owner = next((m for m in node.members if m.colon == colon), None)
            if owner is not None:
                context.key = owner.key
                return
        context.in_key = True

    def _array_cursor(self, context: CursorContext, node: Node, offset: int) -> None:
        items = node.items
        index = 0
        for position, item in enumerate(items):
            if item.end <= offset and not _touches(item, offset):
                index = position + 1
            elif _touches(item, offset):
                index = position
                if not item.is_container:
                    self._token(context, item.start, item.end, offset)
                break
            else:
                break
        if self.format == "json" and index < len(items) and items[index].start > offset:
            # Between two items: past a comma the next index, before it the previous item.
            between = self.text[items[index - 1].end if index else node.start + 1 : offset]
            if index and "," not in between:
                index -= 1
        context.index = index

    def _token(
        self, context: CursorContext, start: int, end: int, offset: int, value: Any = _ABSENT
    ) -> None:
        raw = self.text[start:end]
        context.token = (start, end)
        quoted = raw[:1] in ('"', "'")
        context.in_string = quoted or (self.format == "yaml" and not context.in_key)
        typed = raw[: offset - start]
        context.token_text = typed[1:] if quoted else typed
        context.token_value = value if value is not _ABSENT else _scalar_text(raw, self.format)

    def _closed_quote_before(self, offset: int, start: int) -> bool:
        """Just after a closing quote: the cursor is past the string, not in it."""
        raw = self.text[start:offset]
        return len(raw) >= 2 and raw[0] in "\"'" and raw[-1] == raw[0]

    def _yaml_chain(
        self,
        chain: list[tuple[str | int | None, Node]],
        offset: int,
        context: CursorContext,
    ) -> list[tuple[str | int | None, Node]]:
        """YAML blocks are found by indentation: the container a cursor is in is the one whose
        keys (or dashes) line up with the line being typed, which spans alone cannot tell on a
        line that holds nothing yet."""
        line_start = self.text.rfind("\n", 0, offset) + 1
        line = self.text[line_start:offset]
        stripped = line.lstrip(" ")
        column = len(line) - len(stripped)
        while stripped.startswith("- ") or stripped == "-":
            stripped = stripped[2:].lstrip(" ") if stripped != "-" else ""
            column = len(line) - len(stripped)
        context.indent = " " * column
        root = self.root
        if root is None or not root.is_container:
            return [(None, self._empty_object(offset))] if not self.text.strip() else chain
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
                        chain.append((last.key, self._empty_object(offset)))
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
                    chain.append((position, self._empty_object(offset)))
                break
            else:
                break
        return chain

    def _empty_object(self, offset: int) -> Node:
        return Node("object", offset, offset, _members=[], _items=[], _tree=self)

    # -- building nodes from tree-sitter ---------------------------------------------------------
    def _span(self, ts: Any) -> tuple[int, int]:
        return self.offsets.char(ts.start_byte), self.offsets.char(ts.end_byte)

    def _json_node(self, ts: Any) -> Node:
        start, end = self._span(ts)
        kind = ts.type
        # ``ts.child(n - 1)``, not ``ts.children[-1]``: the latter builds every child.
        if kind == "object" or kind == "array":
            count = ts.child_count
            last = ts.child(count - 1) if count else None
            closed = last is not None and last.type in "}]" and not last.is_missing
            return Node(kind, start, end, closed, _ts=ts, _tree=self)
        if kind == "string":
            count = ts.child_count
            last = ts.child(count - 1) if count else None
            closed = (
                last is not None and last.type == '"' and not last.is_missing and end > start + 1
            )
            content_end = end - 1 if closed else end
            raw = self.text[start + 1 : content_end]
            node = Node("string", start, end, closed, start + 1, content_end, "\\" not in raw)
            node._value = raw if node.exact else _json_string(raw)
            return node
        if kind in ("true", "false"):
            return Node("boolean", start, end, _value=kind == "true", _tree=self)
        if kind == "null":
            return Node("null", start, end, _value=None, _tree=self)
        if kind == "number":
            return Node("number", start, end, _value=_number(self.text[start:end]), _tree=self)
        node = Node("other", start, end, _tree=self)
        node._value = self.text[start:end]
        return node

    def _members_of(self, node: Node) -> list[Member]:
        ts = node._ts
        if self.format == "yaml":
            return self._yaml_members(ts)
        if not ts.has_error:
            out = []
            for pair in ts.named_children:
                if pair.type != "pair":
                    continue
                out.append(self._json_pair(pair))
            return out
        assembled = _assemble(self, _flatten_json(ts.children[1:]), "object")
        return assembled.members

    def _find_member(self, node: Node, key: str) -> Any:
        ts = node._ts
        if self.format != "json" or ts.has_error:
            return _ABSENT
        wanted = json.dumps(key, ensure_ascii=False).encode("utf-8", "surrogatepass")
        found = None
        data = self.data
        for pair in ts.named_children:  # a pair starts with its key: compare the bytes there
            if data.startswith(wanted, pair.start_byte) and pair.type == "pair":
                found = pair
        if found is None:
            return _ABSENT if "\\" in wanted.decode("utf-8", "replace") else None
        member = self._json_pair(found)
        return member if member.key == key else _ABSENT

    def _json_pair(self, pair: Any) -> Member:
        key_ts = pair.child_by_field_name("key")
        value_ts = pair.child_by_field_name("value")
        key = self._json_node(key_ts)
        colon = key_ts.next_sibling  # ``pair.children`` would build every child: slow
        return Member(
            str(key.value),
            key.start,
            key.end,
            self._json_node(value_ts) if value_ts is not None else None,
            self.offsets.char(colon.end_byte) if colon is not None and colon.type == ":" else None,
        )

    def _items_of(self, node: Node) -> list[Node]:
        ts = node._ts
        if self.format == "yaml":
            return self._yaml_items(ts)
        children = ts.named_children
        if not ts.has_error or not any(c.type == "ERROR" for c in children):
            # Errors only inside items: each item recovers on its own.
            return [self._json_node(c) for c in children if c.type != "comment"]
        return _assemble(self, _flatten_json(ts.children[1:]), "array").items

    def _value_of(self, node: Node) -> Any:
        if node.kind == "object":
            if self.format == "json" and node._ts is not None and not node._ts.has_error:
                try:
                    return json.loads(self.data[node._ts.start_byte : node._ts.end_byte])
                except ValueError:
                    pass
            return {m.key: m.node.value for m in node.members if m.node is not None}
        if node.kind == "array":
            if self.format == "json" and node._ts is not None and not node._ts.has_error:
                try:
                    return json.loads(self.data[node._ts.start_byte : node._ts.end_byte])
                except ValueError:
                    pass
            return [item.value for item in node.items]
        return None

    # -- YAML ------------------------------------------------------------------------------------
    def _yaml_root(self, top: Any) -> Node | None:
        for document in top.named_children:
            if document.type != "document":
                continue
            for child in document.named_children:
                node = self._yaml_node(child)
                if node is not None:
                    return node
        return None

    def _yaml_node(self, ts: Any) -> Node | None:
        """The value a ``block_node``/``flow_node`` (or a bare container or scalar) stands for."""
        while ts is not None and ts.type in ("block_node", "flow_node"):
            content = [c for c in ts.named_children if c.type not in _YAML_DECORATIONS]
            ts = content[0] if content else None
        if ts is None:
            return None
        start, end = self._span(ts)
        kind = ts.type
        if kind in ("block_mapping", "flow_mapping"):
            column = ts.start_point[1] if kind == "block_mapping" else 0
            return Node(
                "object", start, end, True, column=self._column(ts, column), _ts=ts, _tree=self
            )
        if kind in ("block_sequence", "flow_sequence"):
            return Node("array", start, end, True, column=self._column(ts, 0), _ts=ts, _tree=self)
        raw = self.text[start:end]
        if kind == "plain_scalar":
            inner = ts.named_children[0].type if ts.named_child_count else "string_scalar"
            value = _plain_value(raw, inner)
            return Node(
                _YAML_KINDS.get(inner, "string"),
                start,
                end,
                True,
                start,
                end,
                "\n" not in raw and isinstance(value, str),
                _value=value,
            )
        if kind in ("double_quote_scalar", "single_quote_scalar"):
            closed = len(raw) >= 2 and raw[-1] == raw[0]
            content_end = end - 1 if closed else end
            body = self.text[start + 1 : content_end]
            exact = "\n" not in body and ("\\" not in body if raw[0] == '"' else "'" not in body)
            value = body if exact else _quoted_yaml(raw)
            return Node("string", start, end, closed, start + 1, content_end, exact, _value=value)
        if kind == "block_scalar":
            return Node("string", start, end, True, start, end, False, _value=_block_yaml(raw))
        return Node("other", start, end, _value=None)

    def _column(self, ts: Any, fallback: int) -> int:
        # Columns count characters; tree-sitter's are bytes (equal for ASCII indentation).
        start = self.offsets.char(ts.start_byte)
        return start - (self.text.rfind("\n", 0, start) + 1) if ts else fallback

    def _yaml_members(self, ts: Any) -> list[Member]:
        out: list[Member] = []
        for child in _yaml_children(ts):
            if child.type in ("block_mapping_pair", "flow_pair"):
                key_ts = child.child_by_field_name("key")
                value_ts = child.child_by_field_name("value")
                key_node = self._yaml_node(key_ts) if key_ts is not None else None
                if key_node is None:
                    continue
                colon = next((c for c in child.children if c.type == ":"), None)
                out.append(
                    Member(
                        str(key_node.value),
                        key_node.start,
                        key_node.end,
                        self._yaml_node(value_ts) if value_ts is not None else None,
                        self.offsets.char(colon.end_byte) if colon is not None else None,
                    )
                )
            elif child.type == "flow_node":  # a key being typed, no ':' yet
                node = self._yaml_node(child)
                if node is not None and not node.is_container:
                    out.append(Member(str(node.value), node.start, node.end, None))
        return out

    def _yaml_items(self, ts: Any) -> list[Node]:
        out: list[Node] = []
        for child in _yaml_children(ts):
            if child.type == "block_sequence_item":
                content = [c for c in child.named_children if c.type != "comment"]
                node = self._yaml_node(content[0]) if content else None
                if node is None:
                    start, end = self._span(child)
                    node = Node("null", end, end, _value=None)
                out.append(node)
            elif child.type == "flow_node":
                node = self._yaml_node(child)
                if node is not None:
                    out.append(node)
        return out


_YAML_DECORATIONS = ("anchor", "tag", "comment")
_YAML_KINDS = {
    "integer_scalar": "number",
    "float_scalar": "number",
    "boolean_scalar": "boolean",
    "null_scalar": "null",
}


def _yaml_children(ts: Any) -> Iterator[Any]:
    for child in ts.named_children:
        if child.type == "ERROR":
            yield from _yaml_children(child)
        else:
            yield child


def parse_tolerant(
    text: str,
    fmt: str = "json",
    strict_value: Any = _ABSENT,
    path: str | None = None,
    strict_spans: _Spans | None = None,
) -> TolerantDocument:
    return TolerantDocument(text, fmt, strict_value, path=path, strict_spans=strict_spans)


# -- JSON recovery: a stack machine over the tokens tree-sitter could not fit ---------------------


def _flatten_json(children: list[Any]) -> list[Any]:
    """ERROR nodes opened up, so their pieces take part in the container around them."""
    out: list[Any] = []
    for child in children:
        if child.type == "ERROR" and child.child_count:
            out.extend(_flatten_json(child.children))
        elif child.type != "comment":
            out.append(child)
    return out


@dataclass
class _Frame:
    node: Node
    key: Member | None = None  # a key read, its value not yet
    after_colon: bool = False


def _assemble(tree: TolerantDocument, pieces: list[Any], kind: str) -> Node:
    """Rebuild containers from a flat run of tree-sitter pieces (complete values, brackets,
    strings, colons, commas). ``kind`` is the container the pieces are inside ("root": none)."""
    top = Node(
        "object" if kind == "object" else "array",
        tree.offsets.char(pieces[0].start_byte) if pieces else 0,
        len(tree.text),
        False,
        _members=[],
        _items=[],
        _tree=tree,
    )
    stack = [_Frame(top)]
    position = 0
    text_end = len(tree.text)
    while position < len(pieces):
        piece = pieces[position]
        position += 1
        frame = stack[-1]
        kind_here = piece.type
        if kind_here in ("{", "["):
            start = tree.offsets.char(piece.start_byte)
            child = Node(
                "object" if kind_here == "{" else "array",
                start,
                text_end,
                False,
                _members=[],
                _items=[],
                _tree=tree,
            )
            _attach(frame, child, tree)
            stack.append(_Frame(child))
            continue
        if kind_here in ("}", "]"):
            if len(stack) > 1 and not piece.is_missing:
                closing = stack.pop()
                _finish_key(closing)
                closing.node.end = tree.offsets.char(piece.end_byte)
                closing.node.closed = True
            continue
        if kind_here == ",":
            _finish_key(frame)
            continue
        if kind_here == ":":
            frame.after_colon = True
            if frame.key is not None:
                frame.key.colon = tree.offsets.char(piece.end_byte)
            continue
        if kind_here == "pair":
            _finish_key(frame)
            if frame.node.kind == "object":
                frame.node._members.append(tree._json_pair(piece))  # type: ignore[union-attr]
            continue
        if kind_here == '"':
            # A string tree-sitter could not close: its opening quote and what follows.
            start = piece.start_byte
            end = piece.end_byte
            while position < len(pieces) and pieces[position].type in (
                "string_content",
                "escape_sequence",
            ):
                end = pieces[position].end_byte
                position += 1
            node = _loose_string(tree, start, end)
        elif kind_here in ("string_content", "escape_sequence"):
            continue
        else:
            node = tree._json_node(piece)
        _attach(frame, node, tree)
    for frame in stack:
        _finish_key(frame)
    if kind == "root":
        content = top._members or top._items
        if top._items:
            return top._items[0]
        if content:
            return top
        return Node("object", 0, text_end, False, _members=[], _items=[], _tree=tree)
    return top


def _loose_string(tree: TolerantDocument, start_byte: int, end_byte: int) -> Node:
    start, end = tree.offsets.char(start_byte), tree.offsets.char(end_byte)
    raw = tree.text[start + 1 : end]
    closed = False
    if raw.endswith('"') and not raw.endswith('\\"'):
        raw, closed = raw[:-1], True
    node = Node("string", start, end, closed, start + 1, start + 1 + len(raw), "\\" not in raw)
    node._value = raw if node.exact else _json_string(raw)
    return node


def _attach(frame: _Frame, node: Node, tree: TolerantDocument) -> None:
    container = frame.node
    if container.kind == "array":
        container._items.append(node)  # type: ignore[union-attr]
        return
    if frame.key is not None and frame.after_colon:
        frame.key.node = node
        container._members.append(frame.key)  # type: ignore[union-attr]
        frame.key, frame.after_colon = None, False
        return
    if frame.key is not None:  # a key, no colon, then another value: keep the key alone
        container._members.append(frame.key)  # type: ignore[union-attr]
        frame.key = None
    if node.kind in ("string", "other"):
        frame.key = Member(str(node.value), node.start, node.end, None)
        frame.after_colon = False


def _finish_key(frame: _Frame) -> None:
    if frame.key is not None and frame.node.kind == "object":
        frame.node._members.append(frame.key)  # type: ignore[union-attr]
    frame.key, frame.after_colon = None, False


# -- small readers ----------------------------------------------------------------------------------


def _contains(node: Node, offset: int) -> bool:
    if node.is_container:
        if node.closed:
            return node.start < offset < node.end
        return node.start < offset <= node.end
    return node.start <= offset <= node.end


def _touches(node: Node, offset: int) -> bool:
    return node.start <= offset <= node.end


def _near(members: list[Member], offset: int) -> list[Member]:
    """The members that may hold ``offset`` (members are in text order: bisect, then a few)."""
    if len(members) < 16:
        return members
    starts = [m.key_start for m in members]
    at = bisect_right(starts, offset) - 1
    return members[max(0, at - 1) : at + 2]


def _near_items(items: list[Node], offset: int) -> list[tuple[int, Node]]:
    if len(items) < 16:
        return list(enumerate(items))
    starts = [i.start for i in items]
    at = bisect_right(starts, offset) - 1
    return [(i, items[i]) for i in range(max(0, at - 1), min(len(items), at + 2))]


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


def _json_string(body: str) -> str:
    try:
        value = json.loads(f'"{body}"')
        return value if isinstance(value, str) else body
    except ValueError:
        return body


def _number(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _scalar_text(raw: str, fmt: str) -> Any:
    if fmt == "json":
        if raw.startswith('"'):
            return _json_string(raw[1:-1] if len(raw) > 1 and raw.endswith('"') else raw[1:])
        return _number(raw)
    if raw[:1] == '"' or raw[:1] == "'":
        return _quoted_yaml(raw)
    return _plain_value(raw, "string_scalar")


_YAML_TRUE = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}
_YAML_FALSE = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}


def _plain_value(raw: str, inner: str) -> Any:
    if inner == "null_scalar":
        return None
    if inner == "boolean_scalar":
        return raw in _YAML_TRUE if raw in _YAML_TRUE | _YAML_FALSE else raw
    if inner in ("integer_scalar", "float_scalar"):
        try:
            return int(raw, 0) if inner == "integer_scalar" else float(raw)
        except ValueError:
            return raw
    return " ".join(part.strip() for part in raw.split("\n"))


def _quoted_yaml(raw: str) -> str:
    import yaml

    try:
        value = yaml.safe_load(raw if raw[-1:] == raw[:1] and len(raw) > 1 else raw + raw[:1])
        return value if isinstance(value, str) else raw.strip("\"'")
    except yaml.YAMLError:
        return raw.strip("\"'")


def _block_yaml(raw: str) -> str:
    import yaml

    try:
        value = yaml.safe_load(raw)
        return value if isinstance(value, str) else raw
    except yaml.YAMLError:
        return raw
