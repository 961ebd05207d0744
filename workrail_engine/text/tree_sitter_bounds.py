"""What tree-sitter must not parse: YAML it would crash on or misplace, measured from the text alone.

tree-sitter-yaml's scanner writes its indentation levels into a fixed buffer without a check (the
process dies past ``MAX_YAML_BLOCK_LEVELS``), and its rows are 16-bit (nodes past
``MAX_YAML_TREE_LINES`` lines lose their place). No Python code can catch a crash in C, so the
text is measured before tree-sitter sees it; such a text gets the tree of its strict parse.
"""

from __future__ import annotations

import re

from ..limits import MAX_YAML_BLOCK_LEVELS, MAX_YAML_TREE_LINES

__all__ = ["edit_may_change_refusal", "tree_sitter_refusal", "yaml_block_levels"]

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


def edit_may_change_refusal(text: str, fmt: str, start: int, end: int, new_text: str) -> bool:
    """Whether replacing ``text[start:end]`` by ``new_text`` can change what
    ``tree_sitter_refusal`` counts: the lines, or a line's indentation and indicators (typing
    inside a value changes neither, and skips the count)."""
    if fmt != "yaml":
        return False
    breaks = ("\n", "\r")
    if any(b in new_text for b in breaks) or any(b in text[start:end] for b in breaks):
        return True
    line_start = max(text.rfind(b, 0, start) for b in breaks) + 1
    return not text[line_start:start].strip(" ?:-")
