"""YAML workflows: values plus the span of every key and value, from PyYAML's node marks.

YAML files are small and hand-written, so every span is recorded eagerly in one walk over the
composed node tree; libyaml's marks count characters, which is what our spans are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from ..limits import MAX_NESTING, MAX_YAML_ALIAS_NODES, TOO_DEEP
from ._syntax import RAW_SURROGATE, UNPAIRED_SURROGATE, SyntaxProblem, has_raw_surrogate
from .json_pointer import escape_token

__all__ = ["YamlParse", "parse_yaml"]

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader


@dataclass(slots=True)
class YamlParse:
    value: Any
    # pointer -> (key span or None, value span)
    spans: dict[str, tuple[tuple[int, int] | None, tuple[int, int]]]
    # (pointer of the repeated member, first key span, repeated key span)
    duplicates: list[tuple[str, tuple[int, int], tuple[int, int]]]

    def shift(self, by: int) -> None:
        """Move every span ``by`` characters (the text had a prefix PyYAML did not count)."""

        def moved(span: tuple[int, int]) -> tuple[int, int]:
            return (span[0] + by, span[1] + by)

        self.spans = {p: (moved(k) if k else None, moved(v)) for p, (k, v) in self.spans.items()}
        self.duplicates = [(p, moved(a), moved(b)) for p, a, b in self.duplicates]


def _record(node: yaml.Node, pointer: str, key: tuple[int, int] | None, out: YamlParse) -> None:
    out.spans[pointer] = (key, (node.start_mark.index, node.end_mark.index))
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            name = str(key_node.value)
            key_span = (key_node.start_mark.index, key_node.end_mark.index)
            child = f"{pointer}/{escape_token(name)}"
            if name in seen:
                out.duplicates.append((child, seen[name], key_span))
                continue
            seen[name] = key_span
            _record(value_node, child, key_span, out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record(item, f"{pointer}/{index}", None, out)


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _NotPlain(Exception):
    """The tree holds something only PyYAML's constructor builds faithfully (a merge key, a
    repeated key, a key that is a collection, a collection of another type)."""


class _TooDeep(Exception):
    """A collection nested deeper than MAX_NESTING (the first, in document order)."""

    def __init__(self, node: yaml.Node) -> None:
        self.node = node


def _build(
    node: yaml.Node,
    pointer: str,
    key: tuple[int, int] | None,
    out: YamlParse,
    constructor: yaml.constructor.SafeConstructor,
    level: int,
) -> Any:
    """The value of a tree of plain mappings, sequences and scalars, recording its spans as
    `_record` does: the same value as SafeConstructor's, without its per-node bookkeeping (which
    costs more than the C composer that made the nodes). ``level``: the node's nesting level,
    checked here as `_first_too_deep` would, which saves a walk of the tree."""
    if level > MAX_NESTING and isinstance(node, yaml.CollectionNode):
        raise _TooDeep(node)
    out.spans[pointer] = (key, (node.start_mark.index, node.end_mark.index))
    tag = node.tag
    if tag == _STR and isinstance(node, yaml.ScalarNode):
        return node.value
    if isinstance(node, yaml.ScalarNode):  # numbers, booleans, null, timestamps…
        return constructor.construct_object(node, deep=True)
    if tag == _MAP and isinstance(node, yaml.MappingNode):
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in _KEY_TAGS:
                raise _NotPlain
            name = key_node.value
            child = f"{pointer}/{escape_token(name)}"
            if child in out.spans:
                raise _NotPlain
            built_key = name if key_node.tag == _STR else constructor.construct_object(key_node)
            mapping[built_key] = _build(
                value_node,
                child,
                (key_node.start_mark.index, key_node.end_mark.index),
                out,
                constructor,
                level + 1,
            )
        return mapping
    if tag == _SEQ and isinstance(node, yaml.SequenceNode):
        return [
            _build(item, f"{pointer}/{index}", None, out, constructor, level + 1)
            for index, item in enumerate(node.value)
        ]
    raise _NotPlain


# The scalar key types a plain mapping may have (not "<<" merges nor "=" value keys).
_KEY_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null")
)


_HINTS = (
    (
        "found character '\\t' that cannot start any token",
        "Tabs are not allowed for indentation in YAML; use spaces",
    ),
    ("found a tab character", "Tabs are not allowed for indentation in YAML; use spaces"),
    (
        "did not find expected key",
        "Inconsistent indentation: keys of one mapping must start at the same column",
    ),
    (
        "but found another document",
        "A workflow file holds one YAML document; remove the second '---' and what follows, or split the file",
    ),
    (
        "did not find expected '-' indicator",
        "Inconsistent indentation: items of one list must start at the same column",
    ),
    (
        "mapping values are not allowed here",
        "Unexpected ':': quote a value that contains ': ', or fix the indentation",
    ),
)


def _explain(problem: str) -> str:
    for known, hint in _HINTS:
        if known in problem:
            return hint
    return problem[0].upper() + problem[1:]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expansion_problem(root: yaml.Node, text: str) -> SyntaxProblem | None:
    """A problem with what the node graph expands to, measured before anything is built.

    Without an anchor (``&``) there is no alias, so the graph is the tree itself: only its depth
    can be wrong, and that is found by visiting the collections alone (most workflow files; the
    full measure below costs as much as composing the file).

    The composer gives each anchor one node and makes every alias point at it, so the graph is
    small even when the tree it stands for is enormous; constructing the value, recording spans
    and every check after that walk the tree. Here each node is visited once (sizes and depths
    are memoized by node), without recursion: a node reached again while its own children are
    being measured is an alias inside its anchor (a cycle).
    """
    if "&" not in text:
        return _too_deep(_first_too_deep(root))
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    expanding: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_measured = stack.pop()
        key = id(node)
        kids = _children(node)
        if children_measured:
            expanding.discard(key)
            size[key] = 1 + sum(size[id(kid)] for kid in kids)
            deepest = max((depth[id(kid)] for kid in kids), default=0)
            depth[key] = deepest + 1 if isinstance(node, yaml.CollectionNode) else 0
            continue
        if key in size:
            continue
        if key in expanding:
            at = node.start_mark.index
            return SyntaxProblem(
                "A YAML alias refers to a node that contains it (a recursive structure); "
                "a workflow is a tree",
                at,
                at + 1,
                "WR008",
            )
        expanding.add(key)
        stack.append((node, True))
        stack.extend((kid, False) for kid in reversed(kids))
    added = size[id(root)] - len(size)
    if added > MAX_YAML_ALIAS_NODES:
        return SyntaxProblem(
            f"YAML aliases expand this document by {added:,} nodes; the limit is "
            f"{MAX_YAML_ALIAS_NODES:,} (write repeated parts out, or repeat fewer of them)",
            0,
            0,
            "WR008",
        )
    if depth[id(root)] > MAX_NESTING:
        return _too_deep(_first_too_deep(root))
    return None


def _too_deep(node: yaml.Node | None) -> SyntaxProblem | None:
    if node is None:
        return None
    at = node.start_mark.index
    return SyntaxProblem(TOO_DEEP, at, at + 1, "WR005")


def _first_too_deep(root: yaml.Node) -> yaml.Node | None:
    """The first collection (in document order) nested deeper than MAX_NESTING, if any."""
    stack = [(root, 1)]
    while stack:
        node, level = stack.pop()
        if level > MAX_NESTING:
            return node
        stack.extend(
            (kid, level + 1)
            for kid in reversed(_children(node))
            if isinstance(kid, yaml.CollectionNode)
        )
    return None


def parse_yaml(text: str) -> tuple[YamlParse | None, SyntaxProblem | None]:
    if not text.strip():
        return None, SyntaxProblem("The file is empty: a workflow is a mapping", 0, 0, "WR006")
    if has_raw_surrogate(text):  # libyaml cannot even read such text (an editor's buffer)
        at = RAW_SURROGATE.search(text).start()  # type: ignore[union-attr]
        return None, SyntaxProblem(UNPAIRED_SURROGATE, at, at + 1)
    try:
        node = yaml.compose(text, Loader=_Loader)
        if node is None:
            return None, SyntaxProblem("The file holds no YAML document", 0, 0)
        if "&" not in text:  # a tree (see _expansion_problem): checked, built, placed in one walk
            try:
                parsed = YamlParse(None, {}, [])
                parsed.value = _build(node, "", None, parsed, yaml.constructor.SafeConstructor(), 1)
                return parsed, None
            except _TooDeep as deep:
                return None, _too_deep(deep.node)
            except _NotPlain:
                pass
            except Exception:
                # The depth check comes first, as when it was a walk of its own before the build
                too_deep = _too_deep(_first_too_deep(node))
                if too_deep is not None:
                    return None, too_deep
                raise
        expansion = _expansion_problem(node, text)
        if expansion is not None:
            return None, expansion
        value = yaml.constructor.SafeConstructor().construct_document(node)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        at = mark.index if mark is not None else 0
        problem = _explain(err.problem or err.context or "invalid YAML")
        return None, SyntaxProblem(problem, at, min(at + 1, len(text)))
    except yaml.YAMLError as err:  # e.g. a composer error without a mark
        return None, SyntaxProblem(f"Invalid YAML: {err}", 0, 0)
    except RecursionError:
        return None, SyntaxProblem("Nesting too deep", 0, 0, "WR005")
    parsed = YamlParse(value, {}, [])
    _record(node, "", None, parsed)
    return parsed, None
