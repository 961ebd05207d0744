"""Formatting: the engine's one layout (``workrail_engine.text.formatting``, what ``workrail format``
writes), as one edit of the whole document; a range is formatted as its smallest JSON container.

A document that does not parse is left alone (no edits), and so is a YAML document over
``MAX_YAML_FORMAT_CHARS``: ruamel.yaml's round trip is pure Python (about 4 s per MB on a quiet
core, bench/format_and_fix.py), and the server answers nothing else meanwhile; `workrail format`
formats any size.
"""

from __future__ import annotations

import json
import logging

from lsprotocol import types

from workrail_engine.diagnostics import Span
from workrail_engine.text.formatting import format_json, format_text

from .documents import DocumentState

__all__ = ["MAX_YAML_FORMAT_CHARS", "format_document", "format_range"]

log = logging.getLogger(__name__)
MAX_YAML_FORMAT_CHARS = 128 * 1024


def format_document(state: DocumentState) -> list[types.TextEdit] | None:
    if not (state.is_workflow or state.is_json):  # any JSON, as before YAML was formatted
        return None
    if state.is_yaml and len(state.text) > MAX_YAML_FORMAT_CHARS:
        log.warning(
            "not formatting %s in the editor: %d characters of YAML (over %d); run `workrail format`",
            state.uri,
            len(state.text),
            MAX_YAML_FORMAT_CHARS,
        )
        return None
    formatted = format_text(state.text, state.path, state.document.format)
    if formatted is None:
        return None
    if formatted == state.text:
        return []
    whole = Span(0, len(state.text))
    return [types.TextEdit(range=state.positions.range(whole), new_text=formatted)]


def format_range(state: DocumentState, requested: types.Range) -> list[types.TextEdit] | None:
    """Format the smallest object or array that holds the whole range (JSON; a YAML range is not
    formatted: only the whole document's round trip knows where its comments go). The container
    must be valid JSON on its own, even if the rest of the document is still broken."""
    if not state.is_json or not state.is_workflow:
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
