"""Applying the fixes diagnostics carry (`workrail validate --fix`, the editor's fix-all)."""

from __future__ import annotations

import json

import pytest
from fixable_texts import JSON_TEXT as JSON
from fixable_texts import YAML_FIXED
from fixable_texts import YAML_TEXT as YAML

from workrail_engine.diagnostics import Span, TextEdit
from workrail_engine.lint import lint_text
from workrail_engine.lint.fixes import apply_edits, fix_text, fixable


def test_safe_fixes_only_by_default_and_the_count_per_code():
    outcome = fix_text(JSON, "broken.json")
    assert outcome.fixed == {"WR001": 2}
    assert json.loads(outcome.text)["steps"][0]["promt"] == "p"
    assert [d.code for d in outcome.diagnostics] == [
        d.code for d in lint_text(outcome.text, "broken.json").diagnostics
    ]
    assert "WR102" in [d.code for d in outcome.diagnostics]


def test_unsafe_fixes_when_allowed_innermost_first():
    # Renaming `promt` first makes the step's "missing 'prompt'" (whose fix would insert an empty
    # one, and then a duplicate key) go away.
    outcome = fix_text(JSON, "broken.json", unsafe=True)
    assert json.loads(outcome.text)["steps"][0] == {"id": "s", "title": "T", "prompt": "p"}
    assert outcome.fixed == {"WR001": 2, "WR102": 1}
    assert [d.code for d in outcome.diagnostics] == ["WR106"]  # the short step id: no fix


def test_a_yaml_fix_keeps_comments_and_layout():
    outcome = fix_text(YAML, "yaml-flow.yaml")
    assert outcome.text == YAML_FIXED
    assert outcome.fixed == {"WR101": 1} and outcome.diagnostics == []


def test_disabled_codes_are_not_fixed():
    outcome = fix_text(JSON, "broken.json", unsafe=True, enabled=lambda d: d.code != "WR102")
    # The misspelt key stays; the step still gets the placeholder prompt it lacks.
    assert outcome.fixed == {"WR001": 2, "WR103": 1} and '"promt": "p"' in outcome.text


def test_fixable_needs_exactly_one_fix():
    (wr101,) = [d for d in lint_text(YAML, "yaml-flow.yaml").diagnostics if d.code == "WR101"]
    assert fixable(wr101) is wr101.fixes[0]
    from dataclasses import replace

    assert fixable(replace(wr101, fixes=wr101.fixes * 2)) is None


def test_apply_edits_in_any_order():
    text = "abcdef"
    edits = [TextEdit(Span(4, 5), "E"), TextEdit(Span(0, 1), ""), TextEdit(Span(2, 2), "+")]
    assert apply_edits(text, edits) == "b+cdEf"


GOOD_STEP = '{"id": "one", "title": "T", "prompt": "p"}'


@pytest.mark.parametrize(
    ("text", "path", "code", "safe"),
    [
        pytest.param('{"id": "abc", "steps": [],}', "abc.json", "WR001", True, id="trailing-comma"),
        pytest.param('{"id": "abc"\n "steps": []}', "abc.json", "WR001", True, id="missing-comma"),
        pytest.param(
            '\ufeff{"id": "abc", "name": "N", "steps": [' + GOOD_STEP + "]}",
            "abc.json",
            "WR007",
            True,
            id="bom",
        ),
        pytest.param(
            "id: abc\nname: N\nversion: 1.10\nsteps: []\n",
            "abc.yaml",
            "WR101",
            True,
            id="yaml-quote",
        ),
        pytest.param(
            '{"id": "abc", "name": "N", "nme": "x", "steps": [' + GOOD_STEP + "]}",
            "abc.json",
            "WR102",
            False,
            id="closest-key",
        ),
        pytest.param(
            '{"id": "abc", "steps": [' + GOOD_STEP + "]}",
            "abc.json",
            "WR103",
            False,
            id="placeholder",
        ),
        pytest.param(
            '{"id": "abc", "name": "N", "name": "M", "steps": [' + GOOD_STEP + "]}",
            "abc.json",
            "WR002",
            False,
            id="duplicate-key",
        ),
        pytest.param(
            '{"id": "abc", "name": "N", "steps": [' + GOOD_STEP + "]}",
            "other.json",
            "WR601",
            False,
            id="id-from-file-name",
        ),
    ],
)
def test_which_fixes_are_safe(text, path, code, safe):
    (diagnostic,) = [d for d in lint_text(text, path).diagnostics if d.code == code]
    (fix,) = diagnostic.fixes
    assert fix.safe is safe
