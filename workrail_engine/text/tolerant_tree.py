"""The nodes of the tolerant tree: one view of a JSON or YAML value, whether or not its text parses.

Objects have members (key, key span, value node), arrays items, scalars their decoded value, and
every node its span in character offsets. A container read from tree-sitter builds its members,
items and value on first use, through the ``NodeSource`` of its format, so that a look-up builds
only the nodes on its path (a 1 MB workflow has ~100,000 of them).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

__all__ = [
    "ABSENT",
    "Member",
    "Node",
    "NodeSource",
    "container_value",
    "contains",
    "items_near",
    "members_near",
    "touches",
]

# Not known yet (a value to compute on first use), or "this shortcut does not apply".
ABSENT: Any = object()


class NodeSource(Protocol):
    """Where a container's members, items and value come from when first read."""

    def members_of(self, node: Node) -> list[Member]: ...

    def items_of(self, node: Node) -> list[Node]: ...

    def find_member(self, node: Node, key: str) -> Any:
        """The member named ``key`` found without building the others, None if there is none,
        ``ABSENT`` where the source cannot tell without building them."""
        ...

    def value_of(self, node: Node) -> Any: ...


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
    _value: Any = field(default=ABSENT, repr=False)
    _ts: Any = field(default=None, repr=False)  # the tree-sitter node it was read from
    _source: NodeSource | None = field(default=None, repr=False)

    @property
    def is_container(self) -> bool:
        return self.kind in ("object", "array")

    @property
    def members(self) -> list[Member]:
        if self._members is None:
            self._members = self._source.members_of(self) if self._source and self._ts else []
        return self._members

    @property
    def items(self) -> list[Node]:
        if self._items is None:
            self._items = self._source.items_of(self) if self._source and self._ts else []
        return self._items

    def member(self, key: str) -> Member | None:
        """The member named ``key`` (the last one, as every JSON reader keeps the last duplicate)."""
        if self._members is None and self._source is not None and self._ts is not None:
            # Reading one id from each of 2,800 steps must not build all their members.
            found = self._source.find_member(self, key)
            if found is not ABSENT:
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
        if self._value is ABSENT:
            self._value = self._source.value_of(self) if self._source is not None else None
        return self._value


def container_value(node: Node) -> Any:
    """A container's value from its members or items (None for a scalar with no value)."""
    if node.kind == "object":
        return {m.key: m.node.value for m in node.members if m.node is not None}
    if node.kind == "array":
        return [item.value for item in node.items]
    return None


def contains(node: Node, offset: int) -> bool:
    """Whether ``offset`` is inside ``node``: between a container's brackets (or anywhere after
    the opener of one never closed), anywhere on a scalar including its ends."""
    if node.is_container:
        if node.closed:
            return node.start < offset < node.end
        return node.start < offset <= node.end
    return node.start <= offset <= node.end


def touches(node: Node, offset: int) -> bool:
    return node.start <= offset <= node.end


def members_near(members: list[Member], offset: int) -> list[Member]:
    """The members that may hold ``offset`` (members are in text order: bisect, then a few)."""
    if len(members) < 16:
        return members
    starts = [m.key_start for m in members]
    at = bisect_right(starts, offset) - 1
    return members[max(0, at - 1) : at + 2]


def items_near(items: list[Node], offset: int) -> list[tuple[int, Node]]:
    """The items that may hold ``offset``, with their positions."""
    if len(items) < 16:
        return list(enumerate(items))
    starts = [i.start for i in items]
    at = bisect_right(starts, offset) - 1
    return [(i, items[i]) for i in range(max(0, at - 1), min(len(items), at + 2))]
