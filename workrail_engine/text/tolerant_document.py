"""A tolerant tree of a workflow text (JSON or YAML), for the features that run while an author types.

The strict parse (``document.parse_document``) judges syntax and feeds the diagnostics; it has no
tree while the text is broken. This one has a tree anyway, the same view for both formats
(``tolerant_tree``: objects with members, arrays with items, scalars with their decoded value,
every node with its span in character offsets, and a recovered value for the whole document):

- tree-sitter's grammars (error-recovering, incremental) give a concrete tree, read into nodes by
  ``tolerant_json`` and ``tolerant_yaml``; the shapes tree-sitter-json leaves as ``ERROR`` (an
  unclosed object, a key without a value, a missing comma) are reassembled by ``json_recovery``;
- YAML that tree-sitter must not parse (``tree_sitter_bounds``) gets the tree of its strict parse
  (``strict_tree``);
- ``cursor`` says where an offset is in that structure.

This module holds one text version: its tree, its edits (an incremental re-parse) and the look-up
of a JSON pointer or an offset. Nothing here decides whether the text is valid: a recovered tree
never hides a syntax error, because the diagnostics never read it.

Costs on a 1 MB JSON workflow: a full parse ≈ 60 ms, a re-parse after a one-character edit
(``edited``) ≈ 1 ms; nodes are materialized lazily, so reading the steps for an outline touches
the step level only, and the recovered value decodes each error-free subtree with ``json.loads``.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from ..diagnostics import Span
from .cursor import CursorContext, cursor_context
from .json_pointer import unescape_token
from .pointer_spans import PointerSpans
from .strict_tree import StrictSpans, strict_tree
from .tolerant_json import JsonNodes
from .tolerant_tree import ABSENT, Member, Node, contains, items_near, members_near
from .tolerant_yaml import YamlNodes
from .tree_sitter_bounds import edit_may_change_refusal, tree_sitter_refusal
from .tree_sitter_offsets import TreeSitterOffsets

__all__ = ["TolerantDocument", "parse_tolerant"]


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


class TolerantDocument(PointerSpans):
    """The tolerant tree of one text version. ``strict_value``: the strict parse's value, if any
    (it is the recovered value then, so valid documents decode once). ``strict_spans``: the
    strict YAML parse's key and value span of every pointer, from which the tree is built when
    tree-sitter must not parse the text (``refusal`` says why; ``tree`` is then None)."""

    def __init__(
        self,
        text: str,
        fmt: str,
        strict_value: Any = ABSENT,
        tree: Any = None,
        path: str | None = None,
        strict_spans: StrictSpans | None = None,
    ) -> None:
        self.text = text
        self.path = path
        self.format = fmt
        self.data = text.encode("utf-8", "surrogatepass")
        self.offsets = TreeSitterOffsets(text, self.data)
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
            value = self._strict_value
            return strict_tree(self.text, None if value is ABSENT else value, self._strict_spans)
        if self.format == "yaml":
            return YamlNodes(self.text, self.offsets).root(self.tree.root_node)
        return self._json_nodes.root(self.tree.root_node)

    @cached_property
    def _json_nodes(self) -> JsonNodes:
        return JsonNodes(self.text, self.data, self.offsets)

    @cached_property
    def value(self) -> Any:
        if self._strict_value is not ABSENT and self._strict_value is not None:
            return self._strict_value
        root = self.root
        return root.value if root is not None else None

    def edited(self, start: int, end: int, new_text: str) -> TolerantDocument:
        """This tree after ``text[start:end]`` was replaced by ``new_text``: an incremental re-parse."""
        text = self.text[:start] + new_text + self.text[end:]
        if self.tree is None or (
            edit_may_change_refusal(self.text, self.format, start, end, new_text)
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

    def with_strict_value(self, value: Any, spans: StrictSpans | None = None) -> TolerantDocument:
        """The same tree, told the strict parse's value (when the text turned out to be valid)
        and, for YAML, its spans."""
        if value is not None and "value" not in self.__dict__:
            self._strict_value = value
        if spans is not None and "root" not in self.__dict__:
            self._strict_spans = spans
        return self

    # -- pointers and offsets -------------------------------------------------------------------
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
        while node is not None and contains(node, offset):
            chain.append((step, node))
            child: Node | None = None
            if node.kind == "object":
                for member in members_near(node.members, offset):
                    if member.node is not None and contains(member.node, offset):
                        step, child = member.key, member.node
                        break
            elif node.kind == "array":
                found = (
                    self._json_nodes.item_at(node, offset)
                    if self.format == "json" and node._items is None
                    else ABSENT
                )
                if found is None:
                    break
                if found is not ABSENT:
                    step, child = found
                else:
                    for index, item in items_near(node.items, offset):
                        if contains(item, offset):
                            step, child = index, item
                            break
            node = child
        return chain

    def cursor(self, offset: int) -> CursorContext:
        """Describe the structure around ``offset`` (see ``cursor.CursorContext``)."""
        return cursor_context(self, offset)


def parse_tolerant(
    text: str,
    fmt: str = "json",
    strict_value: Any = ABSENT,
    path: str | None = None,
    strict_spans: StrictSpans | None = None,
) -> TolerantDocument:
    return TolerantDocument(text, fmt, strict_value, path=path, strict_spans=strict_spans)
