"""Flow checks (`workrail_engine/lint/flow.py`, `contradictions.py`): a condition that can never
hold (WR410), a loop condition no body step changes (WR207), the output of a step that may have
been skipped (WR307)."""

from __future__ import annotations

import json

import pytest

from tests.engine.lint.lint_workflows import (
    bad_and_good,
    check_bad_and_good,
    lint,
    mutate,
    set_at,
)
from workrail_engine.lint.contradictions import atoms, contradiction


def _loop(prompt: str, **spec: object) -> dict:
    return {
        "id": "polish",
        "type": "loop",
        "title": "Polish",
        "loop": {"type": "while", "condition": {"var": "done", "not_equals": True}, **spec},
        "body": [{"id": "work", "title": "Work", "prompt": prompt}],
    }


def _and(*members: dict) -> dict:
    return {"and": list(members)}


# on the declared parameter, so that no unmentioned variable (WR308) adds to the findings
SIZE_LARGE = {"var": "target", "equals": "large"}
MODE_DEEP = {"var": "parameters.target", "equals": "deep"}

# code, bad change, good change, text the diagnostic must sit on (multi-line objects: None here,
# their ranges are checked below)
CASES = [
    (
        "WR410",
        set_at(
            ["steps", 2, "runCondition"], _and(SIZE_LARGE, {"var": "target", "equals": "small"})
        ),
        set_at(
            ["steps", 2, "runCondition"], _and(SIZE_LARGE, {"var": "target", "startsWith": "l"})
        ),
        None,
    ),
    (
        "WR207",
        lambda w: w["steps"].append(_loop("Work on it.")),
        lambda w: w["steps"].append(_loop("Work on it; set done to true when finished.")),
        None,
    ),
    (
        "WR307",
        set_at(["steps", 0, "runCondition"], MODE_DEEP),
        lambda w: (
            set_at(["steps", 0, "runCondition"], MODE_DEEP)(w),
            w["steps"][2].update(runCondition=_and(MODE_DEEP, SIZE_LARGE)),
        ),
        "{{steps.plan.output}}",
    ),
    (
        "WR308",
        set_at(["steps", 2, "runCondition"], {"var": "taskKind", "equals": "bug"}),
        lambda w: (
            set_at(["steps", 2, "runCondition"], {"var": "taskKind", "equals": "bug"})(w),
            w["steps"][0].update(prompt="Plan the change; set taskKind to bug or feature."),
        ),
        '"taskKind"',
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def _found(workflow: dict, code: str) -> list[tuple[str, object]]:
    result = lint(workflow)
    text = result.document.text
    return [
        (d.pointer, json.loads(text[d.span.start : d.span.end]))
        for d in result.diagnostics
        if d.code == code
    ]


def test_wr410_sits_on_the_comparison_that_contradicts():
    small = {"var": "target", "equals": "small"}
    workflow = mutate(set_at(["steps", 0, "runCondition"], _and(SIZE_LARGE, small)))
    assert _found(workflow, "WR410") == [("/steps/0/runCondition/and/1", small)]


def test_wr410_a_group_member_against_its_group():
    group = {
        "id": "fan",
        "type": "parallel",
        "title": "Fan",
        "runCondition": {"var": "parameters.target", "equals": "fast"},
        "steps": [{"id": "deep", "title": "Deep", "prompt": "Go deep.", "runCondition": MODE_DEEP}],
    }
    workflow = mutate(lambda w: w["steps"].append(group))
    assert _found(workflow, "WR410") == [("/steps/3/steps/0/runCondition", MODE_DEEP)]
    # in sequence, the context may change between the two: no finding
    workflow = mutate(
        lambda w: w["steps"].extend(
            [
                {
                    **group,
                    "steps": [
                        {
                            **group["steps"][0],
                            "runCondition": {"var": "parameters.target", "equals": "fast"},
                        }
                    ],
                }
            ]
        )
    )
    assert _found(workflow, "WR410") == []


def test_wr207_sits_on_the_condition_and_other_changes_count():
    assert _found(mutate(lambda w: w["steps"].append(_loop("Work."))), "WR207") == [
        ("/steps/3/loop/condition", {"var": "done", "not_equals": True})
    ]
    # an explicit bound, the loop's own iteration variable, or a body step's output: no finding
    assert (
        _found(mutate(lambda w: w["steps"].append(_loop("Work.", maxIterations=5))), "WR207") == []
    )
    counted = _loop("Work.", iterationVar="done")
    assert _found(mutate(lambda w: w["steps"].append(counted)), "WR207") == []
    by_output = _loop("Work.")
    by_output["loop"]["condition"] = {"var": "steps.work.output", "not_equals": "ok"}
    assert _found(mutate(lambda w: w["steps"].append(by_output)), "WR207") == []
    # a command step sets no context variable
    by_command = _loop("Work.")
    by_command["body"] = [
        {"id": "done-check", "run": {"command": ["test", "done"], "timeoutSeconds": 5}}
    ]
    assert [p for p, _ in _found(mutate(lambda w: w["steps"].append(by_command)), "WR207")] == [
        "/steps/3/loop/condition"
    ]


@pytest.mark.parametrize(
    ("first", "second", "contradicts"),
    [
        ({"equals": "large"}, {"equals": " Large "}, False),  # lenient: the same value
        ({"equals": "large"}, {"equals": "small"}, True),
        ({"equals": 1}, {"equals": True}, False),  # "1" equals both
        ({"equals": "1"}, {"equals": 1}, False),
        ({"equals": 5}, {"equals": "high"}, True),
        ({"equals": True}, {"equals": False}, True),
        ({"equals": True}, {"equals": "yes"}, False),
        ({"in": ["a", "b"]}, {"equals": "c"}, True),
        ({"in": ["a", "b"]}, {"in": ["B", "d"]}, False),
        ({"equals": "a"}, {"not_equals": "A "}, True),
        ({"equals": "a"}, {"not_equals": "b"}, False),
        ({"gt": 5}, {"lte": 5}, True),
        ({"gte": 5}, {"lte": 5}, False),
        ({"equals": 3}, {"gt": 5}, True),
        ({"equals": "high"}, {"gt": 5}, True),
        ({"equals": True}, {"gt": 0}, False),  # "1" equals true and is 1
        ({"equals": None}, {"equals": "x"}, False),  # null: never judged
        ({"contains": "a"}, {"equals": "b"}, False),
    ],
)
def test_contradictions_are_sound(first, second, contradicts):
    earlier = list(atoms({"var": "v", **first}))
    (atom,) = atoms({"var": "v", **second})
    assert (contradiction(earlier, atom) is not None) is contradicts


@pytest.mark.parametrize(
    ("change", "found"),
    [
        pytest.param(lambda w: None, ["WR308"], id="unmentioned"),
        pytest.param(lambda w: w.update(id="wr.routine-demo"), [], id="routine"),
        pytest.param(
            lambda w: w["steps"].append(
                {"id": "call", "templateCall": {"templateId": "wr.templates.routine.x"}}
            ),
            [],
            id="calls-a-routine",
        ),
        pytest.param(
            lambda w: w["steps"][0].update(prompt="Plan.\ntaskKind: bug?"), [], id="after-a-newline"
        ),
        pytest.param(
            lambda w: w["parameters"]["properties"].update(taskKind={"type": "string"}),
            [],
            id="a-parameter",
        ),
    ],
)
def test_wr308_is_quiet_where_something_may_set_the_variable(change, found):
    condition = {"var": "context.taskKind", "equals": "bug"}
    workflow = mutate(set_at(["steps", 2, "runCondition"], condition))
    change(workflow)
    assert [d.code for d in lint(workflow).diagnostics if d.code == "WR308"] == found
