"""Declared context (`workrail_engine/lint/declared_context.py`): a read of an undeclared variable
(WR309), a comparison with a value outside the declared enum (WR411)."""

from __future__ import annotations

import json

from tests.engine.lint.lint_workflows import bad_and_good, check_bad_and_good, lint, mutate
from workrail_engine.lint import lint_text

SIZE = {"type": "string", "enum": ["small", "large"], "description": "How big the task is"}


def _declared(*changes):
    """The change that declares `taskSize`, asks the first step to set it, then applies
    ``changes`` (each a function of the workflow)."""

    def change(w):
        w["context"] = {"taskSize": SIZE}
        w["steps"][0]["sets"] = ["taskSize"]
        for extra in changes:
            extra(w)

    return change


def _review_runs_when(condition):
    return lambda w: w["steps"][2].update(runCondition=condition)


CASES = [
    (
        "WR309",
        _declared(_review_runs_when({"var": "taskSise", "equals": "small"})),
        _declared(_review_runs_when({"var": "taskSize", "equals": "small"})),
        '"taskSise"',
    ),
    (
        "WR411",
        _declared(_review_runs_when({"var": "taskSize", "equals": "huge"})),
        _declared(_review_runs_when({"var": "taskSize", "equals": "Large "})),
        '"huge"',
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def _found(workflow, code):
    result = lint(workflow)
    text = result.document.text
    return [
        (d.pointer, text[d.span.start : d.span.end], d.severity.value)
        for d in result.diagnostics
        if d.code == code
    ]


def test_wr309_on_templates_and_on_sets_and_reads():
    workflow = mutate(
        _declared(
            lambda w: w["steps"][2].update(
                prompt="Review {{steps.plan.output}} for {{context.audience}} and {{tone}}.",
                reads=["taskSize", "mood"],
            ),
            lambda w: w["steps"][0].update(sets=["taskSize", "scope"]),
        )
    )
    assert _found(workflow, "WR309") == [
        ("/steps/0/sets/1", '"scope"', "warning"),
        ("/steps/2/prompt", "{{context.audience}}", "warning"),
        ("/steps/2/prompt", "{{tone}}", "warning"),
        ("/steps/2/reads/1", '"mood"', "warning"),
    ]


def test_wr411_on_each_element_of_in_outside_the_enum_and_on_not_equals():
    condition = {
        "or": [
            {"var": "context.taskSize", "in": ["small", "medium", "tiny"]},
            {"var": "taskSize", "not_equals": "LARGE"},
            {"var": "taskSize", "not_equals": "xl"},
        ]
    }
    workflow = mutate(_declared(_review_runs_when(condition)))
    assert _found(workflow, "WR411") == [
        ("/steps/2/runCondition/or/0/in/1", '"medium"', "error"),
        ("/steps/2/runCondition/or/0/in/2", '"tiny"', "error"),
        ("/steps/2/runCondition/or/2/not_equals", '"xl"', "error"),
    ]


def test_loop_variables_count_as_declared_and_wr308_gives_way():
    loop = {
        "id": "each-file",
        "type": "loop",
        "title": "Each file",
        "loop": {"type": "forEach", "items": "files", "itemVar": "file", "maxIterations": 5},
        "body": [
            {
                "id": "fix-file",
                "title": "Fix",
                "prompt": "Fix {{file}}.",
                "runCondition": {"var": "file", "endsWith": ".py"},
            }
        ],
    }
    workflow = mutate(
        _declared(
            lambda w: w["context"].update(files={"type": "array"}),
            lambda w: w["steps"].append(loop),
            _review_runs_when({"var": "unmentionedThing", "equals": 1}),
        )
    )
    codes = [d.code for d in lint(workflow).diagnostics]
    assert codes == ["WR309"]  # the undeclared read, once: not WR308 as well


def test_a_file_without_context_is_checked_as_before():
    workflow = mutate(_review_runs_when({"var": "taskSize", "equals": "huge"}))
    codes = [d.code for d in lint_text(json.dumps(workflow, indent=2), "demo.json").diagnostics]
    assert codes == ["WR308"]


def test_a_declared_schema_that_cannot_check_anything_is_reported():
    def bad_schemas(w):
        w["context"]["remote"] = {"$ref": "file:///etc/passwd"}
        w["context"]["broken"] = {"type": "strin"}

    found = [(d.code, d.pointer) for d in lint(mutate(_declared(bad_schemas))).diagnostics]
    assert ("WR406", "/context/remote/$ref") in found
    assert any(code == "WR403" and pointer.startswith("/context/broken") for code, pointer in found)
