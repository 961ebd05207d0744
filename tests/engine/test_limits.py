"""The engine's bounds on documents: nesting, size and YAML alias expansion (docs/security.md)."""

from __future__ import annotations

import json
import time

import pytest

from tests.hostile_workflows import alias_bomb
from workrail_engine.limits import (
    MAX_DOCUMENT_BYTES,
    MAX_NESTING,
    MAX_YAML_ALIAS_NODES,
    nesting_exceeded,
)
from workrail_engine.lint import lint_text
from workrail_engine.text.document import parse_document


def nested_condition(levels: int) -> dict:
    """A runCondition that is ``levels`` objects deep."""
    condition: dict = {"var": "x", "equals": 1}
    for _ in range(levels - 1):
        condition = {"not": condition}
    return condition


def workflow_with_depth(depth: int) -> str:
    """A workflow whose deepest object sits ``depth`` levels down (workflow → steps → step → …)."""
    step = {
        "id": "step",
        "title": "t",
        "prompt": "Set x.",
        "runCondition": nested_condition(depth - 3),
    }
    return json.dumps({"id": "deep", "name": "n", "description": "d", "steps": [step]})


def test_a_workflow_at_the_limit_is_clean_and_one_past_it_is_refused():
    at_limit = lint_text(workflow_with_depth(MAX_NESTING))
    assert at_limit.document.ok and at_limit.diagnostics == []
    text = workflow_with_depth(MAX_NESTING + 1)
    refused = lint_text(text)
    assert refused.document.value is None
    [error] = refused.diagnostics
    assert error.code == "WR005" and f"deeper than {MAX_NESTING}" in error.message
    # it points at the first object past the limit
    assert text[error.span.start] == "{"
    before = text[: error.span.start]
    assert before.count("{") + before.count("[") == MAX_NESTING


@pytest.mark.parametrize("depth", [300, 5000])
def test_a_300_deep_run_condition_is_a_diagnostic_not_an_accepted_workflow(depth):
    condition = '{"not":' * depth + '{"var":"x","equals":1}' + "}" * depth
    text = (
        '{"id":"deep","name":"n","description":"d","steps":[{"id":"s","title":"t",'
        f'"prompt":"p","runCondition":{condition}}}]}}'
    )
    result = lint_text(text)
    assert [d.code for d in result.diagnostics] == ["WR005"]


def test_yaml_nesting_is_bounded_like_json():
    ok = parse_document("x: " + "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1), "w.yaml")
    assert ok.ok
    deep = parse_document("x: " + "[" * MAX_NESTING + "]" * MAX_NESTING, "w.yaml")
    assert [e.code for e in deep.syntax_errors] == ["WR005"]


def test_the_alias_bomb_is_refused_quickly():
    text = alias_bomb()
    assert len(text.encode()) < 500
    started = time.monotonic()
    result = lint_text(text, "bomb.yaml")
    assert time.monotonic() - started < 2
    [error] = result.diagnostics
    assert error.code == "WR008" and f"{MAX_YAML_ALIAS_NODES:,}" in error.message


def test_a_recursive_alias_is_refused():
    result = lint_text("id: a\nsteps: &s\n  - *s\n", "loop.yaml")
    [error] = result.diagnostics
    assert error.code == "WR008" and "recursive" in error.message


def test_ordinary_anchors_and_merges_still_work():
    text = (
        "id: anchors\nname: n\ndescription: d\n"
        "x-common: &common {title: Shared, prompt: Do it}\n"
        "steps:\n  - {<<: *common, id: one}\n  - {<<: *common, id: two}\n"
    )
    doc = parse_document(text, "w.yaml")
    assert doc.ok and [s["title"] for s in doc.value["steps"]] == ["Shared", "Shared"]


def test_aliases_just_under_the_limit_are_accepted():
    # 10 aliases of a 9,000-node list add 90,000 nodes: under the limit.
    text = "base: &b [" + ", ".join(["x"] * 8_999) + "]\nuses: [" + ", ".join(["*b"] * 10) + "]\n"
    assert parse_document(text, "w.yaml").ok
    twelve = text.replace(", ".join(["*b"] * 10), ", ".join(["*b"] * 12))
    assert [e.code for e in parse_document(twelve, "w.yaml").syntax_errors] == ["WR008"]


def test_a_text_larger_than_the_document_limit_is_not_parsed():
    body = "x" * (MAX_DOCUMENT_BYTES // 2)
    text = json.dumps({"id": "big", "a": body, "b": body})
    doc = parse_document(text)
    assert doc.value is None and [e.code for e in doc.syntax_errors] == ["WR004"]
    # multi-byte characters count as the bytes they take in UTF-8
    wide = json.dumps({"id": "wide", "a": "é" * (MAX_DOCUMENT_BYTES // 2 + 10)}, ensure_ascii=False)
    assert len(wide) < MAX_DOCUMENT_BYTES
    assert [e.code for e in parse_document(wide).syntax_errors] == ["WR004"]


def test_edits_cannot_grow_a_document_past_the_limits():
    small = parse_document(workflow_with_depth(10))
    assert small.ok
    at = small.text.index('"prompt"')  # inside the step: the splice path would handle this edit
    grown = small.with_edit(at, at, '"padding": "' + "x" * MAX_DOCUMENT_BYTES + '", ')
    assert [e.code for e in grown.syntax_errors] == ["WR004"]
    inner = small.text.index('{"var"')
    deeper = small.with_edit(inner, inner, '{"not":' * 60)
    deeper = deeper.with_edit(len(deeper.text) - 2, len(deeper.text) - 2, "}" * 60)
    assert [e.code for e in deeper.syntax_errors] == ["WR005"]


def test_nesting_exceeded_names_the_path_to_the_first_container_too_deep():
    deep: object = {"leaf": True}
    for _ in range(10):
        deep = {"a": deep}
    value = {"ok": [1, 2], "x": [0, {"b": deep}]}
    # the value (1), "x" (2), its object (3), "b" and its ten wrappers (4-14)
    assert nesting_exceeded(value, 14) is None
    assert nesting_exceeded(value, 13) == ["x", 1, "b", *["a"] * 10]
    assert nesting_exceeded(value, 5) == ["x", 1, "b", "a", "a"]
    assert nesting_exceeded(((), [[{}]]), 4) is None
    assert nesting_exceeded(((), [[{}]]), 3) == [1, 0, 0]
    assert nesting_exceeded("scalar", 0) is None
    assert nesting_exceeded([], 0) == []


@pytest.mark.parametrize(
    "before",
    ["", "m: {<<: {a: 1}}\n", "d: 2026-13-45\n"],
    ids=["plain tree", "a merge key first", "a date that is no date first"],
)
def test_yaml_too_deep_is_reported_on_the_first_collection_past_the_limit(before):
    """The depth check, made while the value is built, still comes before anything else the
    build could find, and points at the same node as a walk of its own did."""
    text = before + "x: " + "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1) + "\n"
    [error] = parse_document(text, "w.yaml").syntax_errors
    assert error.code == "WR005"
    assert error.span.start == text.index("[") + MAX_NESTING - 1  # at level MAX_NESTING + 1
