"""Formatting: the engine's one layout (``workrail_engine.text.formatting``, what ``workrail format``
writes), as one edit of the whole document. A JSON range is formatted as its smallest container;
a YAML range as the changes `workrail format` makes to the lines of the range: the whole document
is formatted (only its round trip knows where comments go), the two texts compared line by line,
and each changed block that touches the range becomes an edit (a block reaching past the range is
taken whole). The edits are kept only if the text they make still parses to the same value.

A document that does not parse is left alone (no edits), and so is a YAML document over
``MAX_YAML_FORMAT_CHARS``: ruamel.yaml's round trip is pure Python (about 4 s per MB on a quiet
core, bench/format_and_fix.py), and the server answers nothing else meanwhile; `workrail format`
formats any size.
"""

from __future__ import annotations

import difflib
import json
import logging

from lsprotocol import types

from workrail_engine.diagnostics import Span
from workrail_engine.text.document import LineIndex, parse_document
from workrail_engine.text.formatting import format_json, format_text

from .documents import DocumentState

__all__ = ["MAX_YAML_FORMAT_CHARS", "format_document", "format_range"]

log = logging.getLogger(__name__)
MAX_YAML_FORMAT_CHARS = 128 * 1024


def _formatted(state: DocumentState) -> str | None:
    """What `workrail format` writes for the document; None when it is left alone."""
    if state.is_yaml and len(state.text) > MAX_YAML_FORMAT_CHARS:
        log.warning(
            "not formatting %s in the editor: %d characters of YAML (over %d); run `workrail format`",
            state.uri,
            len(state.text),
            MAX_YAML_FORMAT_CHARS,
        )
        return None
    return format_text(state.text, state.path, state.document.format)


def format_document(state: DocumentState) -> list[types.TextEdit] | None:
    if not (state.is_workflow or state.is_json):  # any JSON, as before YAML was formatted
        return None
    formatted = _formatted(state)
    if formatted is None:
        return None
    if formatted == state.text:
        return []
    whole = Span(0, len(state.text))
    return [types.TextEdit(range=state.positions.range(whole), new_text=formatted)]


def format_range(state: DocumentState, requested: types.Range) -> list[types.TextEdit] | None:
    """JSON: format the smallest object or array that holds the whole range (it must be valid
    JSON on its own, even if the rest of the document is still broken). YAML: `_yaml_range`."""
    if not state.is_workflow:
        return None
    if state.is_yaml:
        return _yaml_range(state, requested)
    if not state.is_json:
        return None
    span = state.positions.span(requested)
    container = None
    for _step, node in state.tree.node_at(span.start):
        if node.is_container and node.closed and node.start <= span.start and span.end <= node.end:
            container = node
    if container is None:
        return None
    original = state.text[container.start : container.end]
    try:
        json.loads(original)
    except ValueError:
        return None
    line_start = state.text.rfind("\n", 0, container.start) + 1
    indent = state.text[line_start : container.start]
    indent = indent if not indent.strip() else " " * (len(indent) - len(indent.lstrip()))
    formatted = format_json(original).rstrip("\n").replace("\n", "\n" + indent)
    if formatted == original:
        return []
    return [
        types.TextEdit(
            range=state.positions.range(Span(container.start, container.end)), new_text=formatted
        )
    ]


def _yaml_range(state: DocumentState, requested: types.Range) -> list[types.TextEdit] | None:
    formatted = _formatted(state)
    if formatted is None:
        return None
    offset = _line_starts(state.text)
    old = [state.text[a:b] for a, b in zip(offset, offset[1:], strict=False)]
    new_starts = _line_starts(formatted)
    new = [formatted[a:b] for a, b in zip(new_starts, new_starts[1:], strict=False)]
    first = requested.start.line
    # A range ending at column 0 of a line does not take that line (an editor's selection of
    # whole lines ends there).
    whole_lines = requested.end.character == 0 and requested.end.line > first
    last = requested.end.line - 1 if whole_lines else requested.end.line
    blocks = [
        (i1, i2, "".join(new[j1:j2]))
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, old, new, autojunk=False
        ).get_opcodes()
        if tag != "equal" and i1 <= last and (first < i2 or (i1 == i2 and first <= i1))
    ]
    if not blocks:
        return []
    edits = [(Span(offset[i1], offset[i2]), text) for i1, i2, text in blocks]
    result = state.text
    for span, text in reversed(edits):
        result = result[: span.start] + text + result[span.end :]
    if parse_document(result, state.path, "yaml").value != state.document.value:
        return None  # a part of the layout that only holds with the rest: leave the range alone
    return [
        types.TextEdit(range=state.positions.range(span), new_text=text) for span, text in edits
    ]


def _line_starts(text: str) -> list[int]:
    """Where each line starts (as the server counts lines), then the text's end."""
    starts = LineIndex(text).starts
    return starts if starts[-1] == len(text) else [*starts, len(text)]
