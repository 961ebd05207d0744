"""Template calls: a routine's steps injected in place of the call\n(tests/engine/evaluation/test_templates.py is the `{{...}}` templates of prompts)."""

from __future__ import annotations

import copy

from tests.engine.compile.compile_workflows import compile_with_routines, review_pass_call


def test_a_template_call_injects_the_routine_steps() -> None:
    workflow = review_pass_call(
        {"area": "auth", "depth": 2}, runCondition={"var": "deep", "equals": True}
    )
    before = copy.deepcopy(workflow)
    compiled = compile_with_routines(workflow)
    assert compiled.ok, compiled.problems
    assert workflow == before  # the file as written is untouched
    steps = compiled.definition["steps"]
    assert [s["id"] for s in steps] == ["start", "review.scan", "review.report"]
    assert steps[1]["title"] == "Scan auth"
    assert steps[1]["prompt"] == "Scan auth at depth 2; keep {{notes}}."
    assert steps[1]["guidance"] == ["Stay within the files named."]
    assert steps[2]["guidance"] == ["Be brief.", "Stay within the files named."]
    assert steps[1]["runCondition"] == {"var": "deep", "equals": True}
