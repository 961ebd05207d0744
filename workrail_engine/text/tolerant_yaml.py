"""The tolerant tree of a YAML text, read from tree-sitter-yaml's concrete tree.

tree-sitter-yaml keeps a half-typed key or a misplaced line inside an ``ERROR`` node of the
mapping or sequence it belongs to; its children are read as the container's own, so the members
around the error keep their keys and spans. Block containers remember the column of their keys or
dashes: the cursor finds the container a new line belongs to by it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .tolerant_scalars import block_yaml, plain_yaml, quoted_yaml
from .tolerant_tree import ABSENT, Member, Node, container_value
from .tree_sitter_offsets import TreeSitterOffsets

__all__ = ["YamlNodes"]

_DECORATIONS = ("anchor", "tag", "comment")
_SCALAR_KINDS = {
    "integer_scalar": "number",
    "float_scalar": "number",
    "boolean_scalar": "boolean",
    "null_scalar": "null",
}


class YamlNodes:
    """The nodes of one YAML text version's tree-sitter tree, built on demand (a ``NodeSource``)."""

    def __init__(self, text: str, offsets: TreeSitterOffsets) -> None:
        self.text = text
        self.offsets = offsets

    def root(self, top: Any) -> Node | None:
        """The value of the stream's first document that has one."""
        for document in top.named_children:
            if document.type != "document":
                continue
            for child in document.named_children:
                node = self.node(child)
                if node is not None:
                    return node
        return None

    def node(self, ts: Any) -> Node | None:
        """The value a ``block_node``/``flow_node`` (or a bare container or scalar) stands for."""
        while ts is not None and ts.type in ("block_node", "flow_node"):
            content = [c for c in ts.named_children if c.type not in _DECORATIONS]
            ts = content[0] if content else None
        if ts is None:
            return None
        start, end = self.offsets.span(ts)
        kind = ts.type
        if kind in ("block_mapping", "flow_mapping"):
            return Node(
                "object", start, end, True, column=self._column(start), _ts=ts, _source=self
            )
        if kind in ("block_sequence", "flow_sequence"):
            return Node("array", start, end, True, column=self._column(start), _ts=ts, _source=self)
        raw = self.text[start:end]
        if kind == "plain_scalar":
            inner = ts.named_children[0].type if ts.named_child_count else "string_scalar"
            value = plain_yaml(raw, inner)
            return Node(
                _SCALAR_KINDS.get(inner, "string"),
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
            value = body if exact else quoted_yaml(raw)
            return Node("string", start, end, closed, start + 1, content_end, exact, _value=value)
        if kind == "block_scalar":
            return Node("string", start, end, True, start, end, False, _value=block_yaml(raw))
        return Node("other", start, end, _value=None)

    def _column(self, start: int) -> int:
        # Counted in characters from the line's start: tree-sitter's columns are bytes.
        return start - (self.text.rfind("\n", 0, start) + 1)

    def members_of(self, node: Node) -> list[Member]:
        out: list[Member] = []
        for child in _children(node._ts):
            if child.type in ("block_mapping_pair", "flow_pair"):
                key_ts = child.child_by_field_name("key")
                value_ts = child.child_by_field_name("value")
                key_node = self.node(key_ts) if key_ts is not None else None
                if key_node is None:
                    continue
                colon = next((c for c in child.children if c.type == ":"), None)
                out.append(
                    Member(
                        str(key_node.value),
                        key_node.start,
                        key_node.end,
                        self.node(value_ts) if value_ts is not None else None,
                        self.offsets.char(colon.end_byte) if colon is not None else None,
                    )
                )
            elif child.type == "flow_node":  # a key being typed, no ':' yet
                node_of_key = self.node(child)
                if node_of_key is not None and not node_of_key.is_container:
                    out.append(
                        Member(str(node_of_key.value), node_of_key.start, node_of_key.end, None)
                    )
        return out

    def find_member(self, node: Node, key: str) -> Any:
        return ABSENT  # a key's bytes say little in YAML (plain, quoted, folded): read them all

    def items_of(self, node: Node) -> list[Node]:
        out: list[Node] = []
        for child in _children(node._ts):
            if child.type == "block_sequence_item":
                content = [c for c in child.named_children if c.type != "comment"]
                item = self.node(content[0]) if content else None
                if item is None:  # a dash with nothing after it yet
                    end = self.offsets.char(child.end_byte)
                    item = Node("null", end, end, _value=None)
                out.append(item)
            elif child.type == "flow_node":
                item = self.node(child)
                if item is not None:
                    out.append(item)
        return out

    def value_of(self, node: Node) -> Any:
        return container_value(node)


def _children(ts: Any) -> Iterator[Any]:
    """A container's children, those tree-sitter put inside an ``ERROR`` node among them."""
    for child in ts.named_children:
        if child.type == "ERROR":
            yield from _children(child)
        else:
            yield child
