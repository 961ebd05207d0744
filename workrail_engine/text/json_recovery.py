"""Containers rebuilt from the pieces of broken JSON that tree-sitter could not fit.

tree-sitter-json recovers most errors inside its tree, but an unclosed object, a key without a
value or a missing comma leave ``ERROR`` nodes holding a flat run of pieces: complete values,
brackets, strings, colons, commas. A small stack machine reassembles them into objects and arrays
the way an author most likely meant them, so that the members before and after the error still
have their keys and spans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .tolerant_scalars import json_string
from .tolerant_tree import Member, Node

if TYPE_CHECKING:
    from .tolerant_json import JsonNodes

__all__ = ["assemble", "flatten_errors"]


def flatten_errors(children: list[Any]) -> list[Any]:
    """ERROR nodes opened up, so their pieces take part in the container around them."""
    out: list[Any] = []
    for child in children:
        if child.type == "ERROR" and child.child_count:
            out.extend(flatten_errors(child.children))
        elif child.type != "comment":
            out.append(child)
    return out


@dataclass
class _Frame:
    node: Node
    key: Member | None = None  # a key read, its value not yet
    after_colon: bool = False


def assemble(nodes: JsonNodes, pieces: list[Any], kind: str) -> Node:
    """Rebuild containers from a flat run of tree-sitter pieces. ``kind`` is the container the
    pieces are inside ("object", "array"; "root": none)."""
    offsets, text_end = nodes.offsets, len(nodes.text)
    top = Node(
        "object" if kind == "object" else "array",
        offsets.char(pieces[0].start_byte) if pieces else 0,
        text_end,
        False,
        _members=[],
        _items=[],
        _source=nodes,
    )
    stack = [_Frame(top)]
    position = 0
    while position < len(pieces):
        piece = pieces[position]
        position += 1
        frame = stack[-1]
        kind_here = piece.type
        if kind_here in ("{", "["):
            start = offsets.char(piece.start_byte)
            child = Node(
                "object" if kind_here == "{" else "array",
                start,
                text_end,
                False,
                _members=[],
                _items=[],
                _source=nodes,
            )
            _attach(frame, child)
            stack.append(_Frame(child))
            continue
        if kind_here in ("}", "]"):
            if len(stack) > 1 and not piece.is_missing:
                closing = stack.pop()
                _finish_key(closing)
                closing.node.end = offsets.char(piece.end_byte)
                closing.node.closed = True
            continue
        if kind_here == ",":
            _finish_key(frame)
            continue
        if kind_here == ":":
            frame.after_colon = True
            if frame.key is not None:
                frame.key.colon = offsets.char(piece.end_byte)
            continue
        if kind_here == "pair":
            _finish_key(frame)
            if frame.node.kind == "object":
                frame.node._members.append(nodes.pair(piece))  # type: ignore[union-attr]
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
            node = _loose_string(nodes, start, end)
        elif kind_here in ("string_content", "escape_sequence"):
            continue
        else:
            node = nodes.node(piece)
        _attach(frame, node)
    for frame in stack:
        _finish_key(frame)
    if kind == "root":
        content = top._members or top._items
        if top._items:
            return top._items[0]
        if content:
            return top
        return Node("object", 0, text_end, False, _members=[], _items=[], _source=nodes)
    return top


def _loose_string(nodes: JsonNodes, start_byte: int, end_byte: int) -> Node:
    start, end = nodes.offsets.char(start_byte), nodes.offsets.char(end_byte)
    raw = nodes.text[start + 1 : end]
    closed = False
    if raw.endswith('"') and not raw.endswith('\\"'):
        raw, closed = raw[:-1], True
    node = Node("string", start, end, closed, start + 1, start + 1 + len(raw), "\\" not in raw)
    node._value = raw if node.exact else json_string(raw)
    return node


def _attach(frame: _Frame, node: Node) -> None:
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
