"""Edits: a document made by ``with_edit`` is exactly the document parsed from the new text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from workrail_engine.document import parse_document
from workrail_engine.lint import lint_document

WORKFLOW = {
    "id": "edits",
    "name": "Edits",
    "version": "1.0.0",
    "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
    "steps": [
        {
            "id": "plan",
            "title": "Plan",
            "prompt": "Plan for {{parameters.target}}.",
            "runCondition": {"var": "mode", "equals": "full"},
        },
        {"id": "build", "run": {"command": ["make", "{{parameters.target}}"]}},
        {
            "id": "group",
            "type": "parallel",
            "steps": [{"id": "lint", "run": {"command": ["ruff"], "timeoutSeconds": 5}}],
        },
        {
            "id": "check",
            "title": "Check",
            "prompt": "Check {{steps.plan.output}} ✓",
            "validationCriteria": {"type": "length", "min": 1, "message": "m"},
        },
        {
            "id": "again",
            "type": "loop",
            "loop": {"type": "while", "condition": {"var": "more", "equals": True}},
            "body": "check",
        },
    ],
}
TEXT = json.dumps(WORKFLOW, indent=2, ensure_ascii=False)

# Small edits an author makes: typing or deleting a character, or pasting a fragment.
FRAGMENTS = st.sampled_from(
    [
        "\r",
        "\r\n",
        "\n\n",
        "",
        "x",
        '"',
        ",",
        "}",
        "{",
        "1",
        '"promt": "x", ',
        "\n  ",
        '{"id": "q"}',
        "é",
        "\\ud800",
    ]
)


def _same(a, b):
    assert a.text == b.text
    assert a.line_index.starts == b.line_index.starts
    assert a.value == b.value
    assert [(d.code, d.span) for d in a.syntax_errors] == [
        (d.code, d.span) for d in b.syntax_errors
    ]
    assert [d.to_dict() for d in lint_document(a)] == [d.to_dict() for d in lint_document(b)]


@settings(max_examples=300)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(TEXT)), st.integers(0, 12), FRAGMENTS), min_size=1, max_size=4
    )
)
def test_with_edit_equals_a_fresh_parse(edits):
    doc = parse_document(TEXT, "edits.json")
    lint_document(doc)  # fills the per-step cache the edited documents share
    assert doc.line_index.line_count > 1  # computed, so edits shift it
    for start, length, fragment in edits:
        start = min(start, len(doc.text))
        end = min(start + length, len(doc.text))
        edited = doc.with_edit(start, end, fragment)
        _same(edited, parse_document(edited.text, "edits.json"))
        doc = edited


def test_an_edit_inside_one_step_keeps_the_other_steps_objects():
    doc = parse_document(TEXT, "edits.json")
    at = TEXT.index("Check {{")
    edited = doc.with_edit(at, at + 5, "Verify")
    assert edited.value["steps"][3]["prompt"].startswith("Verify {{")
    assert all(edited.value["steps"][i] is doc.value["steps"][i] for i in (0, 1, 2, 4))
    assert edited.value_span("/steps/4/body") is not None
    assert edited.text[edited.value_span("/steps/4/body").start :].startswith('"check"')


def test_an_edit_that_breaks_the_syntax_falls_back_to_a_full_parse():
    doc = parse_document(TEXT, "edits.json")
    at = TEXT.index('"Plan"')
    edited = doc.with_edit(at, at + 1, "")
    assert edited.value is None and edited.syntax_errors[0].code == "WR001"


@given(
    text=st.text(alphabet="ab\n\ré", max_size=40),
    start=st.integers(0, 40),
    length=st.integers(0, 5),
    new_text=st.text(alphabet="ab\n\ré", max_size=6),
)
def test_line_index_edit_equals_a_fresh_index(text, start, length, new_text):
    from workrail_engine.document import LineIndex

    start = min(start, len(text))
    end = min(start + length, len(text))
    edited_text = text[:start] + new_text + text[end:]
    shifted = LineIndex(text).edited(edited_text, start, end, new_text)
    assert shifted.starts == LineIndex(edited_text).starts
    assert [shifted.position(o, "utf-16") for o in range(len(edited_text) + 1)] == [
        LineIndex(edited_text).position(o, "utf-16") for o in range(len(edited_text) + 1)
    ]
