"""The workflow's structure (WR2xx): step ids and loops."""

from __future__ import annotations

from tests.engine.lint.lint_workflows import bad_and_good, check_bad_and_good, lint, mutate, set_at

LOOP = {
    "id": "again",
    "type": "loop",
    "loop": {"type": "while", "condition": {"var": "steps.review.output", "equals": "again"}},
    "body": "review",
}
INLINE_LOOP = {
    "id": "outer",
    "type": "loop",
    "loop": {"type": "for", "count": 2},
    "body": [{"id": "inner", "type": "loop", "loop": {"type": "for", "count": 2}, "body": "plan"}],
}


# code, bad change, good change, text the diagnostic must sit on
CASES = [
    ("WR201", set_at(["steps", 2, "id"], "plan"), set_at(["steps", 2, "id"], "review-2"), '"plan"'),
    (
        "WR202",
        lambda w: w["steps"].append({**LOOP, "body": "reveiw"}),
        lambda w: w["steps"].append(LOOP),
        '"reveiw"',
    ),
    (
        "WR203",
        lambda w: w["steps"].append({**LOOP, "loop": {"type": "until"}}),
        lambda w: w["steps"].append(LOOP),
        '"loop"',
    ),
    (
        "WR204",
        lambda w: w["steps"].append(INLINE_LOOP),
        lambda w: w["steps"].append({**INLINE_LOOP, "body": "plan"}),
        '"loop"',
    ),
    (
        "WR205",
        lambda w: w["steps"].append({**LOOP, "loop": {"type": "forEach"}}),
        lambda w: w["steps"].append({**LOOP, "loop": {"type": "forEach", "items": ["a"]}}),
        '"loop"',
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def test_duplicate_step_ids_point_at_both():
    result = lint(mutate(set_at(["steps", 2, "id"], "plan")))
    dups = [d for d in result.diagnostics if d.code == "WR201"]
    assert len(dups) == 2
    assert {d.pointer for d in dups} == {"/steps/0/id", "/steps/2/id"}
    assert all(len(d.related) == 1 for d in dups)
