"""The tolerant tree of a JSON text, read from tree-sitter-json's concrete tree.

Well-formed containers are read node by node, on first use; a container tree-sitter left with
``ERROR`` children is rebuilt by ``json_recovery``. The value of an error-free container is
decoded by ``json.loads`` from its bytes (C speed), not node by node.
"""

from __future__ import annotations

import json
from typing import Any

from .json_recovery import assemble, flatten_errors
from .tolerant_scalars import json_number, json_string
from .tolerant_tree import ABSENT, Member, Node, container_value, contains
from .tree_sitter_offsets import TreeSitterOffsets

__all__ = ["JsonNodes"]


class JsonNodes:
    """The nodes of one JSON text version's tree-sitter tree, built on demand (a ``NodeSource``)."""

    def __init__(self, text: str, data: bytes, offsets: TreeSitterOffsets) -> None:
        self.text = text
        self.data = data
        self.offsets = offsets

    def root(self, top: Any) -> Node | None:
        """The value of the document node ``top``: its one value, or what the pieces of a broken
        text (or of several top-level values) assemble into."""
        values = (
            [c for c in top.named_children if c.type != "comment"]
            if top.type == "document"
            else [top]
        )
        if not values:
            return None
        if len(values) == 1 and values[0].type != "ERROR":
            return self.node(values[0])
        return assemble(self, flatten_errors(values), "root")

    def node(self, ts: Any) -> Node:
        start, end = self.offsets.span(ts)
        kind = ts.type
        # ``ts.child(n - 1)``, not ``ts.children[-1]``: the latter builds every child.
        if kind == "object" or kind == "array":
            count = ts.child_count
            last = ts.child(count - 1) if count else None
            closed = last is not None and last.type in "}]" and not last.is_missing
            return Node(kind, start, end, closed, _ts=ts, _source=self)
        if kind == "string":
            count = ts.child_count
            last = ts.child(count - 1) if count else None
            closed = (
                last is not None and last.type == '"' and not last.is_missing and end > start + 1
            )
            content_end = end - 1 if closed else end
            raw = self.text[start + 1 : content_end]
            node = Node("string", start, end, closed, start + 1, content_end, "\\" not in raw)
            node._value = raw if node.exact else json_string(raw)
            return node
        if kind in ("true", "false"):
            return Node("boolean", start, end, _value=kind == "true", _source=self)
        if kind == "null":
            return Node("null", start, end, _value=None, _source=self)
        if kind == "number":
            return Node(
                "number", start, end, _value=json_number(self.text[start:end]), _source=self
            )
        node = Node("other", start, end, _source=self)
        node._value = self.text[start:end]
        return node

    def pair(self, pair: Any) -> Member:
        key_ts = pair.child_by_field_name("key")
        value_ts = pair.child_by_field_name("value")
        key = self.node(key_ts)
        colon = key_ts.next_sibling  # ``pair.children`` would build every child: slow
        return Member(
            str(key.value),
            key.start,
            key.end,
            self.node(value_ts) if value_ts is not None else None,
            self.offsets.char(colon.end_byte) if colon is not None and colon.type == ":" else None,
        )

    def members_of(self, node: Node) -> list[Member]:
        ts = node._ts
        if not ts.has_error:
            return [self.pair(pair) for pair in ts.named_children if pair.type == "pair"]
        return assemble(self, flatten_errors(ts.children[1:]), "object").members

    def find_member(self, node: Node, key: str) -> Any:
        """One member of a well-formed object, found by comparing key bytes and built alone."""
        ts = node._ts
        if ts.has_error:
            return ABSENT
        wanted = json.dumps(key, ensure_ascii=False).encode("utf-8", "surrogatepass")
        found = None
        data = self.data
        for pair in ts.named_children:  # a pair starts with its key: compare the bytes there
            if data.startswith(wanted, pair.start_byte) and pair.type == "pair":
                found = pair
        if found is None:
            # A key that needs escapes may be written with other ones than ``json.dumps`` writes.
            return ABSENT if "\\" in wanted.decode("utf-8", "replace") else None
        member = self.pair(found)
        return member if member.key == key else ABSENT

    def items_of(self, node: Node) -> list[Node]:
        ts = node._ts
        children = ts.named_children
        if not ts.has_error or not any(c.type == "ERROR" for c in children):
            # Errors only inside items: each item recovers on its own.
            return [self.node(c) for c in children if c.type != "comment"]
        return assemble(self, flatten_errors(ts.children[1:]), "array").items

    def value_of(self, node: Node) -> Any:
        if node.is_container and node._ts is not None and not node._ts.has_error:
            try:
                return json.loads(self.data[node._ts.start_byte : node._ts.end_byte])
            except ValueError:  # what tree-sitter accepts and JSON does not (comments)
                pass
        return container_value(node)

    def item_at(self, node: Node, offset: int) -> Any:
        """The (index, item) of an array holding ``offset``, or None, without building the other
        items (a new tree version would otherwise build 2,800 step nodes for one look-up);
        ``ABSENT`` where this shortcut does not apply (errors or comments in the array)."""
        ts = node._ts
        if ts is None or ts.has_error:
            return ABSENT
        data, start, end = self.data, ts.start_byte, ts.end_byte
        if data.find(b"//", start, end) >= 0 or data.find(b"/*", start, end) >= 0:
            return ABSENT  # comments are children too: positions would not be (i - 1) / 2
        walker = ts.walk()
        position = walker.goto_first_child_for_byte(self.offsets.byte(offset))
        if position is None or position % 2 == 0:  # "[", "," or "]": between items
            return None
        item = self.node(walker.node)
        return ((position - 1) // 2, item) if contains(item, offset) else None
