"""The tolerant tree built from the strict parse's value and spans, for YAML tree-sitter must not
parse (see ``tree_sitter_bounds``): the same nodes, keys and spans tree-sitter gives for a text
that parses, and no tree while the text does not."""

from __future__ import annotations

from typing import Any

from .json_pointer import escape_token
from .tolerant_tree import Member, Node

__all__ = ["StrictSpans", "strict_tree"]

# JSON pointer → (key span or None, value span), as ``_yaml_text.YamlParse.spans`` gives them.
StrictSpans = dict[str, tuple[tuple[int, int] | None, tuple[int, int]]]


def strict_tree(text: str, value: Any, spans: StrictSpans | None) -> Node | None:
    """The tree of ``value`` (None: the text did not parse) placed by ``spans``."""
    if value is None or not spans or "" not in spans:
        return None
    return _node(text, value, "", spans)


def _node(text: str, value: Any, pointer: str, spans: StrictSpans) -> Node:
    start, end = spans[pointer][1]
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
            colon = text.find(":", key_span[1], spans[at][1][0] + 1)
            node = _node(text, child, at, spans)
            members.append(Member(str(key), *key_span, node, colon + 1 if colon >= 0 else None))
        return Node("object", start, end, column=column, _members=members, _items=[], _value=value)
    if isinstance(value, list):
        items = [
            _node(text, child, f"{pointer}/{index}", spans)
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
