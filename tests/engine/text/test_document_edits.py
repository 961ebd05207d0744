"""Edits: a document made by ``with_edit`` is exactly the document parsed from the new text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from workrail_engine.lint import lint_document
from workrail_engine.text.document import parse_document

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
    from workrail_engine.text.document import LineIndex

    start = min(start, len(text))
    end = min(start + length, len(text))
    edited_text = text[:start] + new_text + text[end:]
    shifted = LineIndex(text).edited(edited_text, start, end, new_text)
    assert shifted.starts == LineIndex(edited_text).starts
    assert [shifted.position(o, "utf-16") for o in range(len(edited_text) + 1)] == [
        LineIndex(edited_text).position(o, "utf-16") for o in range(len(edited_text) + 1)
    ]


def _large_workflow(count: int) -> str:
    """Many steps of every kind the whole-document checks look at: references to earlier, later
    and missing steps, literals in braces, upstream's functions, assessments, fragments and
    contracts, a loop with its own functions, a parallel group holding both kinds of members."""
    steps: list[dict] = []
    for i in range(count):
        step: dict = {
            "id": f"step-{i}",
            "title": f"Step {i} {{{{not rendered}}}}",
            "prompt": f"After {{{{steps.step-{max(i - 1, 0)}.output}}}} see {{{{steps.step-{i + 2}.output}}}}",
        }
        kind = i % 9
        if kind == 1:
            step["prompt"] += " {{wr.refs.x}} {{(a / b).toFixed(1)}} {{steps. x}} {{secret.TOKEN}}"
        elif kind == 2:
            step["functionReferences"] = ["known()", "unknwn()", "local()"]
            step["functionDefinitions"] = [{"name": "local", "definition": "d"}]
        elif kind == 3:
            step["assessmentRefs"] = ["quality", "qualty"]
            step["assessmentConsequences"] = [{"when": {"forAssessment": "other"}}]
        elif kind == 4:
            step["promptFragments"] = [{"id": "a", "text": "t"}, {"id": "a", "text": "u"}]
            step["outputContract"] = {"contractRef": "wr.contracts.review_verdic"}
        elif kind == 5:
            step = {
                "id": f"step-{i}",
                "type": "loop",
                "loop": {"type": "for", "count": 2, "conditionSource": {"contractRef": "x"}},
                "functionDefinitions": [{"name": "inLoop", "definition": "d"}],
                "body": [
                    {
                        "id": f"body-{i}",
                        "prompt": "{{parameters.target}}",
                        "functionReferences": ["inLoop()"],
                    }
                ],
            }
        elif kind == 6:
            step = {
                "id": f"step-{i}",
                "type": "parallel",
                "steps": [{"id": f"member-{i}", "run": {"command": ["echo", "{{secrets.KEY}}"]}}],
                "parallelDelegations": [{"id": f"delegate-{i}"}],
            }
        steps.append(step)
    steps[count // 2]["id"] = "step-0"  # a duplicate id
    workflow = {
        "id": "large",
        "name": "Large",
        "version": "1.0.0",
        "functionDefinitions": [{"name": "known", "definition": "d"}],
        "metaGuidance": ["prose(): defined in prose"],
        "assessments": [{"id": "quality"}],
        "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
        "steps": steps,
    }
    return json.dumps(workflow, indent=2, ensure_ascii=False)


# Five steps of each of the nine kinds, the duplicate in the middle: every kind before and after
# it. (180 steps checked nothing more and cost the suite ≈ 7 s of CPU: two lints per edit.)
LARGE_TEXT = _large_workflow(45)
LARGE_FULL_LINT = lint_document(parse_document(LARGE_TEXT, "large.json"))


@settings(max_examples=40, deadline=None)
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, len(LARGE_TEXT)),
            st.booleans(),
            st.sampled_from(["x", '"', "{", "}", ",", " ", "1", "é", "(", "."]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_incremental_lint_equals_a_full_lint_over_single_character_edits(edits):
    """Each keystroke re-lints reusing the previous version's per-step results (the editor's
    path); the diagnostics must be exactly those of linting the new text from scratch."""
    doc = parse_document(LARGE_TEXT, "large.json")
    assert lint_document(doc) == LARGE_FULL_LINT
    for at, delete, char in edits:
        at = min(at, len(doc.text) - 1)
        doc = doc.with_edit(at, at + 1, "") if delete else doc.with_edit(at, at, char)
        incremental = [d.to_dict() for d in lint_document(doc)]
        full = [d.to_dict() for d in lint_document(parse_document(doc.text, "large.json"))]
        assert incremental == full
