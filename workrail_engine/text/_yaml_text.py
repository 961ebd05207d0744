"""YAML workflows: values plus the span of every key and value, from PyYAML's node marks.

The composed node tree is kept: libyaml's marks count characters, which is what our spans are,
so a pointer is placed by following it down the tree, and every span is recorded in one walk
when all are asked for (the editor's tolerant tree).
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import Any

import yaml

from ..limits import MAX_NESTING, MAX_YAML_ALIAS_NODES, TOO_DEEP
from .json_pointer import escape_token, unescape_token
from .syntax_problems import RAW_SURROGATE, UNPAIRED_SURROGATE, SyntaxProblem, has_raw_surrogate

__all__ = ["YamlParse", "parse_yaml"]

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader


Offsets = tuple[int, int]  # [start, end) in characters


# What PyYAML's scalar constructors raise, with no mark, for a value that does not fit its
# explicit tag (``!!int abc``, ``!!bool ys``, a ``!!timestamp`` that is no date): a bare
# ValueError, KeyError… that ended ``workrail validate`` with a traceback.
_UNFIT = (ValueError, KeyError, AttributeError, TypeError, OverflowError)


def _unfit(node: yaml.Node) -> yaml.constructor.ConstructorError:
    """The problem at a value that does not fit its tag."""
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    return yaml.constructor.ConstructorError(
        None, None, f"the value does not fit its tag {tag}", node.start_mark
    )


class _Constructor(yaml.constructor.SafeConstructor):  # type: ignore[misc]  # PyYAML is untyped
    """PyYAML's safe constructor, for trees `_build_plain` leaves to it (anchors, merges…),
    whose failure on a value that does not fit its tag is a problem at that value."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except _UNFIT as err:
            raise _unfit(node) from err


@dataclass(slots=True)
class YamlParse:
    """A YAML text's value and what places its pointers in the text."""

    value: Any
    # (pointer of the repeated member, first key span, repeated key span)
    duplicates: list[tuple[str, Offsets, Offsets]]
    # The composed node tree, whose marks place every pointer (see `locate`).
    root: yaml.Node
    _spans: dict[str, tuple[Offsets | None, Offsets]] | None = None
    _shift: int = 0

    @property
    def spans(self) -> dict[str, tuple[Offsets | None, Offsets]]:
        """pointer -> (key span or None, value span) of every node: built on first use (the
        editor's tolerant tree reads them all; a check placing a few findings calls `locate`)."""
        if self._spans is None:
            recorded = YamlParse(None, [], self.root)
            _record(self.root, "", None, recorded)
            self._spans = recorded._spans_moved(self._shift)
        return self._spans

    def locate(self, pointer: str) -> tuple[Offsets | None, Offsets] | None:
        """``spans.get(pointer)``, found by following the pointer down the node tree when the
        spans are not built yet."""
        if self._spans is not None:
            return self._spans.get(pointer)
        found = _follow(self.root, pointer)
        if found is None:
            return None
        key, node = found
        by = self._shift
        key_span = (key.start_mark.index + by, key.end_mark.index + by) if key else None
        return key_span, (node.start_mark.index + by, node.end_mark.index + by)

    def shift(self, by: int) -> None:
        """Move every span ``by`` characters (the text had a prefix PyYAML did not count)."""
        self._shift += by
        if self._spans is not None:
            self._spans = self._spans_moved(by)
        self.duplicates = [(p, _moved(a, by), _moved(b, by)) for p, a, b in self.duplicates]

    def _spans_moved(self, by: int) -> dict[str, tuple[Offsets | None, Offsets]]:
        spans = self._spans or {}
        if not by:
            return spans
        return {p: (_moved(k, by) if k else None, _moved(v, by)) for p, (k, v) in spans.items()}


def _moved(span: Offsets, by: int) -> Offsets:
    return (span[0] + by, span[1] + by)


def _record(node: yaml.Node, pointer: str, key: Offsets | None, out: YamlParse) -> None:
    """Every node's spans into ``out._spans`` (a repeated key keeps its first value's place),
    every repeated key into ``out.duplicates``."""
    if out._spans is None:
        out._spans = {}
    out._spans[pointer] = (key, (node.start_mark.index, node.end_mark.index))
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, Offsets] = {}
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


def _follow(root: yaml.Node, pointer: str) -> tuple[yaml.Node | None, yaml.Node] | None:
    """(key node or None, node) at ``pointer`` as `_record` places it: a member by the text of
    its key (the first of repeated ones), an item by its index written plainly."""
    if not pointer:
        return None, root
    if pointer[0] != "/":
        return None
    key: yaml.Node | None = None
    node = root
    for token in pointer[1:].split("/"):
        name = unescape_token(token)
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if str(key_node.value) == name:
                    key, node = key_node, value_node
                    break
            else:
                return None
        elif isinstance(node, yaml.SequenceNode):
            if not (name.isascii() and name.isdigit()) or str(int(name)) != name:
                return None
            index = int(name)
            if index >= len(node.value):
                return None
            key, node = None, node.value[index]
        else:
            return None
    return key, node


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _Composer(_Loader):  # type: ignore[misc]
    """PyYAML's composer, minus the resolver's cost.

    The composer (libyaml's, in C) asks ``self.resolve(kind, value, implicit)`` for the tag of
    every node without an explicit one, and calls ``descend_resolver``/``ascend_resolver``
    around each; PyYAML's Python methods there cost a fifth of composing a workflow file. Here
    those calls go to C callables that do nothing but keep the arguments — ``slice`` holds all
    three — and `_tag` resolves a node's tag by PyYAML's rules when the value is built, where
    every scalar is looked at anyway. Only `_build_plain` reads these trees; everything else
    gets nodes from `_Loader`.
    """

    resolve = slice
    descend_resolver = operator.is_
    ascend_resolver = tuple


# PyYAML's implicit resolvers (YAML 1.1: null, bool, int, float, timestamp, merge, value…) by
# the first character of a plain scalar, each list followed by those for any first character.
_ANY_FIRST = tuple(yaml.resolver.Resolver.yaml_implicit_resolvers.get(None, ()))
_IMPLICIT = {
    first: (*resolvers, *_ANY_FIRST)
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
    if first is not None
}


def _tag(node: yaml.Node) -> str:
    """The node's tag as PyYAML's `Resolver.resolve` gives it (see `_Composer`)."""
    tag = node.tag
    if tag.__class__ is not slice:
        return tag  # type: ignore[no-any-return]
    kind, value, implicit = tag.start, tag.stop, tag.step
    if kind is yaml.ScalarNode:
        # a plain scalar: its text may make it a number, a boolean, null…
        return _plain_tag(value) if implicit[0] else _STR
    return _SEQ if kind is yaml.SequenceNode else _MAP


def _plain_tag(text: str) -> str:
    """The tag PyYAML's implicit resolvers give a plain scalar of this text."""
    if len(text) <= _REMEMBERED_TEXT:  # keys and short values repeat in every file and step
        return _remembered_plain_tag(text)
    return _resolved_plain_tag(text)


def _resolved_plain_tag(text: str) -> str:
    for resolved, pattern in _IMPLICIT.get(text[:1], _ANY_FIRST):
        if pattern.match(text):
            return resolved  # type: ignore[no-any-return]
    return _STR


_REMEMBERED_TEXT = 64
_remembered_plain_tag = functools.lru_cache(maxsize=4096)(_resolved_plain_tag)


class _NotPlain(Exception):
    """The tree holds something only PyYAML's constructor builds faithfully (a merge key, a key
    that is not a string, a repeated key, a collection of another type)."""


class _TooDeep(Exception):
    """A collection nested deeper than MAX_NESTING (the first, in document order)."""

    def __init__(self, node: yaml.Node) -> None:
        self.node = node


def _build_plain(node: yaml.Node, constructor: yaml.constructor.SafeConstructor, level: int) -> Any:
    """The value of a tree of plain mappings (string keys), sequences and scalars: the same
    value as SafeConstructor's, without its per-node bookkeeping (which costs more than the C
    composer that made the nodes). ``level``: the node's nesting level, checked here as
    `_first_too_deep` would, which saves a walk of the tree. `_tag`'s rules are written out
    for scalars: this runs once per node of every YAML file."""
    kind = node.__class__
    tag = node.tag
    if kind is yaml.ScalarNode:
        if tag.__class__ is slice:
            text = node.value
            if not tag.step[0] or not _IMPLICIT.get(text[:1], _ANY_FIRST):
                return text  # quoted, or plain text no implicit type starts with
            tag = _plain_tag(text)
        if tag == _STR:
            return node.value
        node.tag = tag  # numbers, booleans, null, timestamps…: PyYAML's constructors
        try:
            return constructor.construct_object(node, deep=True)
        except _UNFIT as err:
            raise _unfit(node) from err
    if level > MAX_NESTING:
        raise _TooDeep(node)
    if tag.__class__ is slice:
        tag = _MAP if kind is yaml.MappingNode else _SEQ
    if kind is yaml.MappingNode and tag == _MAP:
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.__class__ is not yaml.ScalarNode:
                raise _NotPlain
            name = key_node.value
            key_tag = key_node.tag
            if key_tag.__class__ is slice:
                if (
                    key_tag.step[0]
                    and _IMPLICIT.get(name[:1], _ANY_FIRST)
                    and _plain_tag(name) != _STR
                ):
                    raise _NotPlain
            elif key_tag != _STR:
                raise _NotPlain
            if name in mapping:
                raise _NotPlain
            mapping[name] = _build_plain(value_node, constructor, level + 1)
        return mapping
    if kind is yaml.SequenceNode and tag == _SEQ:
        return [_build_plain(item, constructor, level + 1) for item in node.value]
    raise _NotPlain


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
        if "&" not in text:  # a tree (see _expansion_problem): checked and built in one walk
            node = yaml.compose(text, Loader=_Composer)
            if node is None:
                return None, SyntaxProblem("The file holds no YAML document", 0, 0)
            try:
                value = _build_plain(node, yaml.constructor.SafeConstructor(), 1)
                return YamlParse(value, [], node), None
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
        node = yaml.compose(text, Loader=_Loader)
        if node is None:
            return None, SyntaxProblem("The file holds no YAML document", 0, 0)
        expansion = _expansion_problem(node, text)
        if expansion is not None:
            return None, expansion
        value = _Constructor().construct_document(node)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        at = mark.index if mark is not None else 0
        problem = _explain(err.problem or err.context or "invalid YAML")
        return None, SyntaxProblem(problem, at, min(at + 1, len(text)))
    except yaml.YAMLError as err:  # e.g. a composer error without a mark
        return None, SyntaxProblem(f"Invalid YAML: {err}", 0, 0)
    except RecursionError:
        return None, SyntaxProblem("Nesting too deep", 0, 0, "WR005")
    parsed = YamlParse(value, [], node)
    _record(node, "", None, parsed)
    return parsed, None
