"""Per-version document states: an incremental change goes through the engine's ``with_edit``."""

from __future__ import annotations

import json

from lsprotocol import types
from pygls.workspace import TextDocument

from workrail_engine.lint import lint_document
from workrail_engine.text.document import parse_document
from workrail_lsp.documents import DocumentStates

URI = "file:///tmp/ws/edit.workflow.json"


def test_an_edit_inside_a_step_reparses_only_that_step():
    text = json.dumps(
        {
            "id": "edit",
            "name": "E",
            "steps": [{"id": f"s-{i}", "title": "T", "prompt": "p ü"} for i in range(50)],
        },
        indent=2,
        ensure_ascii=False,
    )
    states = DocumentStates()
    document = TextDocument(URI, text, version=1)
    before = states.get(document)
    old_steps = before.document.value["steps"]
    at = text.index('"p ü"', text.index('"s-30"'))
    line, column = before.line_index.position(at + 1, "utf-16")
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line, column), types.Position(line, column + 1)), text="q"
    )
    document.apply_change(change)
    document.version = 2
    edited = states.edited_document(URI, change)
    after = states.get(document, edited)
    assert after.document is edited and after.text == document.source
    new_steps = after.document.value["steps"]
    assert new_steps[30]["prompt"] == "q ü" and new_steps[30] is not old_steps[30]
    assert all(
        new_steps[i] is old_steps[i] for i in range(50) if i != 30
    )  # the other steps were kept
    fresh = parse_document(document.source, after.path)
    assert after.document.value == fresh.value
    assert lint_document(after.document) == lint_document(fresh)


def test_a_stale_edit_is_ignored():
    states = DocumentStates()
    document = TextDocument(URI, '{"id": "x"}', version=1)
    states.get(document)
    other = parse_document('{"id": "something else"}', "/tmp/ws/edit.workflow.json")
    document.version = 2
    state = states.get(document, other)  # text differs: the state parses its own text
    assert state.document is not other and state.document.value == {"id": "x"}
