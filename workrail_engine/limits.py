"""The bounds on what the engine accepts from a file or a client, in one place.

Each limit is far above what a real workflow or a real client needs and far below what would
hurt: a stack overflow in a recursive walk, a serializer that refuses a deep value after the work
is done, a file that never ends, a YAML document that expands to gigabytes. docs/security.md
keeps the table and says how each one is tested.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_COMPILED_STEP_CHARS",
    "MAX_CONFIG_BYTES",
    "MAX_COMPILED_WORKFLOW_CHARS",
    "MAX_DOCUMENT_BYTES",
    "MAX_FINDINGS_PER_FILE",
    "MAX_NESTING",
    "MAX_YAML_ALIAS_NODES",
    "MAX_YAML_BLOCK_LEVELS",
    "MAX_YAML_TREE_LINES",
    "TOO_DEEP",
    "NestingTooDeep",
    "nesting_exceeded",
    "parse_json_within_nesting",
]

MAX_NESTING = 64
"""Objects and arrays nested inside one another, counting the outermost one as level 1.

The deepest bundled workflow nests 9 levels and a condition tree of 20 `and`/`or`/`not` levels is
already unreadable; results wrap what they return in at most ~8 more levels (the JSON-RPC
envelope, `structuredContent`, a step inside a guidance object). 64 keeps every result far below
the 254 levels the MCP SDK's serializer can write and every recursive walk in the engine far
below Python's recursion limit (1,000 frames).
"""

TOO_DEEP = (
    f"Nesting is deeper than {MAX_NESTING} levels (objects and arrays inside one another); "
    "a workflow never needs this much"
)

MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
"""The largest workflow document read from disk or taken from an editor (UTF-8 bytes).

The largest bundled workflow is ~40 KB; a 5 MiB file is 100 times the biggest real one.
"""

MAX_CONFIG_BYTES = 1024 * 1024
"""The largest project configuration file read (``.workrail/config.toml``, a ``pyproject.toml``,
a file ``extend`` names), in bytes.

A real ``pyproject.toml`` is a few kilobytes (large ones ~50 KB); past a mebibyte the file is no
configuration, and `workrail validate` says so instead of reading it.
"""

MAX_YAML_ALIAS_NODES = 100_000
"""How many nodes YAML aliases (``*name`` and ``<<: *name`` merges) may add to a document.

Each use of an alias repeats every node of its anchor: seven levels of ten aliases turn 395 bytes
into 10 million nodes (the "billion laughs"). A real workflow repeats a few blocks; the nodes
written out in the text are bounded by the document size instead.
"""

MAX_COMPILED_STEP_CHARS = 1024 * 1024
"""The most text one served step may hold once compiled (its strings, in characters).

The compile step multiplies text (routine arguments, bindings, refs), so a small file can ask for
a gigabyte prompt. The largest compiled step of upstream WorkRail's own workflows is ~24,000
characters; a million is forty times that, and more than any model reads in one prompt.
"""

MAX_COMPILED_WORKFLOW_CHARS = 8 * 1024 * 1024
"""The most text the steps of one compiled workflow may hold in all (characters).

Upstream's largest compiled workflow is ~143,000 characters; 8 Mi is more than any file within
the 5 MiB document limit holds as written, so only what the compile step adds can reach it.
"""

MAX_ANSWER_CHARS = 1024 * 1024
"""The longest answer to a step (a session's notes, the output of a run's prompt step), the
agent's or the client's model's, in characters.

An answer is stored and returned with the step (`get_workflow_run` shows it in several places:
a 12 MB answer made a 96 MB reply). Notes are a recap of what was done; a step may ask the model
for at most 100,000 tokens, about 400,000 characters, and a million is more than twice that.
"""

MAX_FINDINGS_PER_FILE = 1000
"""How many diagnostics one file reports; one more (WR009) says how many were left out.

The worst bundled or upstream workflow has a few dozen findings while it is being written; a
thousand is already more than anyone reads, and an editor slows down when it is handed tens of
thousands of markers for one document.
"""

MAX_YAML_BLOCK_LEVELS = 100
"""How many YAML block indentation levels may be open at once before tree-sitter parses the text.

tree-sitter-yaml's scanner saves its stack of indentation levels (4 bytes each, at most two per
column: a mapping and a sequence written at its keys' column) into tree-sitter's 1,024-byte
buffer without checking the size: at 254 levels it writes past the buffer and the process dies
(a segmentation fault, not an exception: a 46 KB file took the language server down). Levels are
counted from the text alone by ``tree_sitter_bounds.yaml_block_levels``, which never counts fewer
than the scanner holds; 100 leaves room for 64 levels of nesting (``MAX_NESTING``) and the
indentation inside block scalars. Past it the editor's tree is built from the strict parse (or
is absent), never by tree-sitter.
"""

MAX_YAML_TREE_LINES = 32_767
"""The most lines of YAML tree-sitter's grammar can place: its scanner keeps rows in 16 bits, so
the parse of a longer text stops at row 32,767 with an error (an empty outline, no hover). Longer
YAML gets the tree built from the strict parse instead."""


# Exactly the container types JSON and YAML parsers (and the JSON-RPC layer) build; comparing
# types instead of calling isinstance makes the walk twice as fast on a large document.
_CONTAINERS = frozenset({dict, list, tuple})


def nesting_exceeded(value: Any, limit: int = MAX_NESTING) -> list[str | int] | None:
    """The path (keys and indexes) to the first object or array nested deeper than ``limit``.

    None when the value is within the limit. The common case (within the limit) descends into
    the containers only and builds no paths: on a 900 KB workflow about 2 ms, a twentieth of
    parsing it. Recursion, bounded by ``limit`` (a level-by-level walk listing every level's
    containers cost 1.7× as much on workflows); any deeper value Python can hold is measured
    without it.
    """
    if type(value) not in _CONTAINERS or (limit > 0 and not _deeper_than(value, limit - 1)):
        return None
    return _path_to_depth(value, limit + 1)


def _deeper_than(node: Any, levels: int) -> bool:
    """Whether a container nests more than ``levels`` levels of containers inside ``node``."""
    for child in node.values() if type(node) is dict else node:
        kind = type(child)
        if kind is dict or kind is list or kind is tuple:  # _CONTAINERS, tested inline
            if levels == 0 or _deeper_than(child, levels - 1):
                return True
    return False


def _path_to_depth(value: Any, depth: int) -> list[str | int]:
    """The path to the first container (depth first, in document order) at ``depth``."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if len(path) + 1 == depth:
            return path
        items = list(node.items() if type(node) is dict else enumerate(node))
        for key, child in reversed(items):
            if type(child) in _CONTAINERS:
                stack.append((child, [*path, key]))
    return []


class NestingTooDeep(ValueError):
    """A JSON value from a client nests deeper than `MAX_NESTING`."""


def parse_json_within_nesting(text: str) -> Any:
    """JSON ``text`` from a client (a form field, a command-line value) as a value.

    Raises `NestingTooDeep` past `MAX_NESTING` levels (also for text too deep for Python's
    parser, which would otherwise raise RecursionError), and ValueError for text that is not JSON.
    """
    too_deep = f"the JSON value is nested deeper than {MAX_NESTING} levels"
    try:
        value = json.loads(text)
    except RecursionError:  # deeper than Python's parser goes: far past the limit
        raise NestingTooDeep(too_deep) from None
    if nesting_exceeded(value) is not None:
        raise NestingTooDeep(too_deep)
    return value
