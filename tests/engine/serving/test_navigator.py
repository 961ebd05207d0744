"""The stateless navigator: order, conditions, loops carried between calls, groups, guidance, errors."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workrail_engine.catalog import Catalog, Source
from workrail_engine.errors import InvalidCriteria, InvalidParams, InvalidRunState, StepNotFound
from workrail_engine.serving.navigator import LOOPS_KEY, NextStep, next_step

TASK = {
    "id": "ai-task-implementation",
    "name": "AI Task Prompt Workflow",
    "preconditions": ["Task description is clear and complete"],
    "clarificationPrompts": ["Which module is affected?"],
    "metaGuidance": ["Keep changes small."],
    "steps": [
        {
            "id": "understand",
            "title": "Deep understanding of task and codebase",
            "prompt": "Analyze the task description for {{context.taskId}}.",
            "agentRole": "You are a careful senior engineer.",
            "guidance": ["Read the tests first."],
            "requireConfirmation": True,
            "modelHint": "model-with-strong-reasoning",
            "validationCriteria": [
                {"type": "contains", "value": "Assumptions", "message": "Documented assumptions"}
            ],
        },
        {
            "id": "plan-large",
            "title": "Plan in depth",
            "prompt": "Write a design.",
            "runCondition": {
                "and": [{"var": "taskScope", "equals": "large"}, {"var": "complexity", "gt": 0.7}]
            },
        },
        {
            "id": "implement",
            "title": "Implement",
            "prompt": "Implement it; see {{steps.plan-large.output}}.",
        },
        {"id": "verify", "title": "Verify", "prompt": "Run the tests."},
    ],
}


def drive(
    workflow: dict,
    context: dict | None = None,
    act: Callable[[NextStep, dict], None] | None = None,
    limit: int = 100,
) -> list[NextStep]:
    """Play an obedient agent: append each returned id, pass the returned context back."""
    completed: list[str] = []
    results = []
    for _ in range(limit):
        result = next_step(workflow, completed, context)
        results.append(result)
        if result.is_complete:
            return results
        context = copy.deepcopy(result.context)
        if act:
            act(result, context)
        completed.append(result.step["id"])
    raise AssertionError("the workflow did not complete")


def ids(results: list[NextStep]) -> list[str]:
    return [r.step["id"] for r in results if r.step]


# --- order and conditions -------------------------------------------------------------------


def test_first_step_and_its_guidance() -> None:
    result = next_step(TASK, [], {"taskId": "TASK-123"})
    # the step as written, its prompt rendered for the agent
    assert result.step == {
        **TASK["steps"][0],
        "prompt": "Analyze the task description for TASK-123.",
    }
    assert result.is_complete is False
    guidance = result.guidance
    assert guidance["requiresConfirmation"] is True
    assert guidance["modelHint"] == "model-with-strong-reasoning"
    assert guidance["validationCriteria"] == [
        'Documented assumptions (the output contains "Assumptions")'
    ]
    prompt = guidance["prompt"]
    for expected in [
        "Role: You are a careful senior engineer.",
        "- Task description is clear and complete",
        "- Which module is affected?",
        "Analyze the task description for TASK-123.",
        "- Read the tests first.",
        "- Keep changes small.",
        '- Documented assumptions (the output contains "Assumptions")',
        "Ask the user to confirm",
    ]:
        assert expected in prompt
    # The engine names no protocol: what to report back is data, phrased by each front end.
    assert "workflow_next" not in prompt and "completedSteps" not in prompt
    assert result.next_action == {"complete": "understand", "passContext": True}
    assert (
        prompt.index("Role:")
        < prompt.index("Task description is clear")
        < prompt.index("Analyze")
        < prompt.index("Keep changes small")
    )


def test_preconditions_only_on_the_first_step() -> None:
    result = next_step(TASK, ["understand"], {})
    assert result.step["id"] == "implement"
    assert "Task description is clear" not in result.guidance["prompt"]
    assert "Keep changes small." in result.guidance["prompt"]  # metaGuidance stays with every step
    assert "modelHint" not in result.guidance
    assert result.guidance["requiresConfirmation"] is False


def test_an_unset_template_is_visible_and_outputs_come_from_the_context() -> None:
    prompt = next_step(TASK, ["understand"], {}).guidance["prompt"]
    assert "see [unset: steps.plan-large.output]." in prompt
    carried = {"steps": {"plan-large": {"output": "PLAN"}}}
    assert "see PLAN." in next_step(TASK, ["understand"], carried).step["prompt"]


@pytest.mark.parametrize(
    ("context", "expected", "skipped"),
    [
        pytest.param(
            {"taskScope": "large", "complexity": 0.8}, "plan-large", [], id="condition-holds"
        ),
        pytest.param(
            {"taskScope": "large", "complexity": 0.5},
            "implement",
            ["plan-large"],
            id="condition-fails",
        ),
        pytest.param({}, "implement", ["plan-large"], id="variables-missing"),
        pytest.param(
            {"taskScope": "LARGE ", "complexity": "0.9"},
            "plan-large",
            [],
            id="lenient-equals-and-numeric-string",
        ),
        pytest.param(
            {"taskScope": "large", "complexity": "high"},
            "implement",
            ["plan-large"],
            id="word-is-not-a-number",
        ),
    ],
)
def test_run_conditions(context: dict, expected: str, skipped: list[str]) -> None:
    result = next_step(TASK, ["understand"], context)
    assert result.step["id"] == expected
    assert result.skipped == skipped


def test_a_condition_false_by_type_is_explained_in_notes() -> None:
    result = next_step(TASK, ["understand"], {"taskScope": "large", "complexity": "high"})
    assert result.skipped == ["plan-large"]
    assert any('complexity is a string ("high"), not a number' in note for note in result.notes), (
        result.notes
    )


def test_complete() -> None:
    result = next_step(TASK, ["understand", "implement", "verify"], {})
    assert result.is_complete is True
    assert result.step is None
    assert result.skipped == ["plan-large"]
    assert result.to_dict()["step"] is None and result.to_dict()["isComplete"] is True


def test_to_dict_has_the_spec_shape() -> None:
    payload = next_step(TASK, [], {"taskId": "T"}).to_dict()
    assert {"step", "guidance", "isComplete"} <= set(payload)
    assert set(payload["guidance"]) == {
        "prompt",
        "modelHint",
        "requiresConfirmation",
        "validationCriteria",
    }
    assert payload["context"] == {"taskId": "T"}  # no empty loop bookkeeping when there is no loop


def test_the_callers_context_is_not_changed() -> None:
    context = {"items": ["a"], LOOPS_KEY: {}}
    workflow = {
        "id": "w",
        "steps": [
            {
                "id": "each",
                "type": "loop",
                "loop": {"type": "forEach", "items": "items", "itemVar": "x"},
                "body": [{"id": "b", "title": "b", "prompt": "p"}],
            }
        ],
    }
    before = copy.deepcopy(context)
    result = next_step(workflow, [], context)
    assert context == before
    assert result.context["x"] == "a"


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8), st.data())
def test_next_is_the_first_due_step_in_order(
    flags: list[tuple[bool, bool]], data: st.DataObject
) -> None:
    # each step i has a condition that holds or not, and is completed or not
    steps = [
        {
            "id": f"step-{i}",
            "title": "t",
            "prompt": "p",
            "runCondition": {"var": f"on.{i}", "equals": True},
        }
        for i in range(len(flags))
    ]
    context = {"on": {str(i): holds for i, (holds, _) in enumerate(flags)}}
    completed = [f"step-{i}" for i, (_, done) in enumerate(flags) if done]
    completed = data.draw(st.permutations(completed))
    result = next_step({"id": "w", "steps": steps}, completed, context)
    due = [i for i, (holds, done) in enumerate(flags) if holds and not done]
    if due:
        assert result.step["id"] == f"step-{due[0]}"
        assert result.skipped == [
            f"step-{i}" for i, (holds, done) in enumerate(flags[: due[0]]) if not holds and not done
        ]
    else:
        assert result.is_complete


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(st.lists(st.booleans(), min_size=1, max_size=8))
def test_an_obedient_agent_visits_exactly_the_steps_whose_conditions_hold(
    holds: list[bool],
) -> None:
    steps = [
        {
            "id": f"step-{i}",
            "title": "t",
            "prompt": "p",
            "runCondition": {"var": "on", "contains": i},
        }
        for i in range(len(holds))
    ]
    results = drive({"id": "w", "steps": steps}, {"on": [i for i, h in enumerate(holds) if h]})
    assert ids(results) == [f"step-{i}" for i, h in enumerate(holds) if h]


# --- errors ---------------------------------------------------------------------------------


def test_unknown_current_step() -> None:
    with pytest.raises(StepNotFound) as caught:
        next_step(TASK, [], {}, current_step="implment")
    assert caught.value.code == -32003
    assert caught.value.data["closest"][0] == "implement"
    assert caught.value.data["workflowId"] == "ai-task-implementation"


def test_known_current_step_is_accepted() -> None:
    assert next_step(TASK, ["understand"], {}, current_step="implement").step["id"] == "implement"


def test_unknown_completed_steps_are_all_named() -> None:
    with pytest.raises(StepNotFound) as caught:
        next_step(TASK, ["understand", "undrestand", "verfy", "undrestand"], {})
    error = caught.value
    assert "'undrestand'" in error.message and "'verfy'" in error.message
    assert error.data["unknownSteps"] == [
        {"stepId": "undrestand", "closest": ["understand"]},
        {"stepId": "verfy", "closest": ["verify"]},
    ]


def test_one_unknown_completed_step_says_did_you_mean() -> None:
    with pytest.raises(StepNotFound, match="did you mean 'implement'"):
        next_step(TASK, ["implemnt"], {})


@pytest.mark.parametrize(
    ("completed", "context", "current"),
    [
        pytest.param("understand", {}, None, id="completed-is-a-string"),
        pytest.param([1, 2], {}, None, id="completed-holds-numbers"),
        pytest.param(None, {}, None, id="completed-missing"),
        pytest.param([], ["taskScope"], None, id="context-is-a-list"),
        pytest.param([], {LOOPS_KEY: "iteration 2"}, None, id="loops-key-mangled"),
        pytest.param([], {}, 3, id="current-step-number"),
    ],
)
def test_malformed_input(completed: Any, context: Any, current: Any) -> None:
    with pytest.raises(InvalidParams) as caught:
        next_step(TASK, completed, context, current_step=current)
    assert caught.value.code == -32602


# --- loops ----------------------------------------------------------------------------------

FOR_EACH = {
    "id": "review",
    "steps": [
        {"id": "gather", "title": "Gather", "prompt": "List the files."},
        {
            "id": "each-file",
            "type": "loop",
            "loop": {
                "type": "forEach",
                "items": "files",
                "itemVar": "file",
                "indexVar": "fileIndex",
                "iterationVar": "pass",
            },
            "body": [
                {
                    "id": "read-file",
                    "title": "Read",
                    "prompt": "Read {{context.file}} (#{{context.pass}}).",
                },
                {
                    "id": "test-file",
                    "title": "Test",
                    "prompt": "Test {{context.file}}.",
                    "runCondition": {"var": "file", "endsWith": ".py"},
                },
            ],
        },
        {"id": "summarize", "title": "Summarize", "prompt": "Summarize."},
    ],
}


def test_for_each_loop_end_to_end() -> None:
    results = drive(FOR_EACH, {"files": ["a.py", "README.md", "b.py"]})
    assert ids(results) == [
        "gather",
        "read-file",
        "test-file",
        "read-file",
        "read-file",
        "test-file",
        "summarize",
    ]
    loops = [r.loop for r in results if r.loop]
    assert [(lp["iteration"], lp["index"], lp["item"], lp["total"]) for lp in loops] == [
        (1, 0, "a.py", 3),
        (1, 0, "a.py", 3),
        (2, 1, "README.md", 3),
        (3, 2, "b.py", 3),
        (3, 2, "b.py", 3),
    ]
    prompts = [r.guidance["prompt"] for r in results if r.loop]
    assert "Read a.py (#1)." in prompts[0] and "Test b.py." in prompts[4]
    assert "Loop 'each-file': iteration 2 of 3. Current item: \"README.md\"." in prompts[2]
    assert results[4].skipped == ["test-file"]  # on the way: README.md is not a .py file
    assert results[2].context["file"] == "a.py" and results[2].context["fileIndex"] == 0
    end = results[-2]  # "summarize": loop variables are gone, the loop is recorded as done
    assert (
        "file" not in end.context and "fileIndex" not in end.context and "pass" not in end.context
    )
    assert end.context[LOOPS_KEY]["each-file"]["done"] is True
    assert end.context[LOOPS_KEY]["each-file"]["iterations"] == 3
    assert results[-1].is_complete


def test_for_each_over_an_inline_array_with_body_by_id() -> None:
    workflow = {
        "id": "w",
        "steps": [
            {
                "id": "each",
                "type": "loop",
                "loop": {"type": "forEach", "items": ["x", "y"], "itemVar": "it"},
                "body": "work",
            },
            {"id": "work", "title": "Work", "prompt": "Work on {{context.it}}."},
            {"id": "after", "title": "After", "prompt": "Done."},
        ],
    }
    results = drive(workflow)
    assert ids(results) == ["work", "work", "after"]  # "work" runs only as the loop's body
    assert [
        "Work on x." in results[0].guidance["prompt"],
        "Work on y." in results[1].guidance["prompt"],
    ] == [
        True,
        True,
    ]


def test_empty_for_each_runs_no_body() -> None:
    assert ids(drive(FOR_EACH, {"files": []})) == ["gather", "summarize"]


def test_for_each_without_its_items_variable_says_so() -> None:
    with pytest.raises(InvalidRunState, match="context variable 'files', which is not set"):
        next_step(FOR_EACH, ["gather"], {})


WHILE = {
    "id": "green",
    "steps": [
        {
            "id": "green-loop",
            "type": "loop",
            "loop": {
                "type": "while",
                "condition": {"var": "testsPassing", "not_equals": True},
                "maxIterations": 5,
                "iterationVar": "attempt",
            },
            "body": [
                {
                    "id": "fix",
                    "title": "Fix",
                    "prompt": "Attempt {{context.attempt}}: fix the failures.",
                }
            ],
        },
        {"id": "ship", "title": "Ship", "prompt": "Ship it."},
    ],
}


def test_while_loop_end_to_end() -> None:
    def agent(result: NextStep, context: dict) -> None:
        if result.step["id"] == "fix" and result.loop["iteration"] == 3:
            context["testsPassing"] = True  # the third attempt fixed everything

    results = drive(WHILE, {}, agent)
    assert ids(results) == ["fix", "fix", "fix", "ship"]
    assert [r.loop["iteration"] for r in results if r.loop] == [1, 2, 3]
    assert "Attempt 2: fix the failures." in results[1].guidance["prompt"]
    assert "at most 5" in results[0].guidance["prompt"]
    assert results[-1].notes == []


def test_while_loop_whose_condition_is_false_never_runs() -> None:
    assert ids(drive(WHILE, {"testsPassing": True})) == ["ship"]


def test_max_iterations_ends_the_loop_with_a_note() -> None:
    results = drive(WHILE, {})
    assert ids(results) == ["fix"] * 5 + ["ship"]
    assert "stopped after maxIterations (5)" in results[-2].notes[0]


def test_until_loop_runs_at_least_once() -> None:
    workflow = {
        "id": "w",
        "steps": [
            {
                "id": "again",
                "type": "loop",
                "loop": {"type": "until", "condition": {"var": "ok", "equals": True}},
                "body": [{"id": "try", "title": "Try", "prompt": "p"}],
            }
        ],
    }
    assert ids(drive(workflow, {"ok": True})) == ["try"]

    def agent(result: NextStep, context: dict) -> None:
        context["ok"] = result.loop["iteration"] == 2

    assert ids(drive(workflow, {"ok": False}, agent)) == ["try", "try"]


@pytest.mark.parametrize(
    ("count", "context", "runs"),
    [
        pytest.param(3, {}, 3, id="literal"),
        pytest.param("passes", {"passes": 2}, 2, id="from-context"),
        pytest.param(0, {}, 0, id="zero"),
        pytest.param(10, {}, 4, id="capped-by-maxIterations"),
    ],
)
def test_for_loop(count, context: dict, runs: int) -> None:
    workflow = {
        "id": "w",
        "steps": [
            {
                "id": "passes-loop",
                "type": "loop",
                "loop": {"type": "for", "count": count, "maxIterations": 4},
                "body": [{"id": "pass", "title": "Pass", "prompt": "p"}],
            }
        ],
    }
    assert ids(drive(workflow, context)) == ["pass"] * runs


def test_loop_run_condition_skips_the_whole_loop() -> None:
    workflow = copy.deepcopy(FOR_EACH)
    workflow["steps"][1]["runCondition"] = {"var": "files", "contains": "x"}
    result = next_step(workflow, ["gather"], {"files": ["a.py"]})
    assert result.step["id"] == "summarize"
    assert result.skipped == ["each-file"]


def test_edited_loop_state_is_rejected() -> None:
    first = next_step(FOR_EACH, ["gather"], {"files": ["a.py", "b.py"]})
    context = copy.deepcopy(first.context)
    context[LOOPS_KEY]["each-file"]["iteration"] = 2  # an agent "helpfully" advancing the loop
    with pytest.raises(InvalidRunState, match="was changed") as caught:
        next_step(FOR_EACH, ["gather", "read-file"], context)
    assert caught.value.code == -32005


def test_dropped_completed_entries_are_rejected() -> None:
    context: dict = {"files": ["a.py", "b.py"]}
    completed: list[str] = ["gather"]
    for _ in range(3):
        result = next_step(FOR_EACH, completed, context)
        context = result.context
        completed.append(result.step["id"])
    # iteration 2 began after 3 entries; an agent that dedupes or truncates its log loses them
    assert result.loop["iteration"] == 2
    with pytest.raises(InvalidRunState, match="append to it and never drop entries"):
        next_step(FOR_EACH, ["gather"], context)


def test_body_steps_are_counted_per_iteration() -> None:
    context = next_step(FOR_EACH, ["gather"], {"files": ["a.py", "b.py"]}).context
    # "read-file" already appears from an earlier run of the step; it must be appended again
    completed = ["gather", "read-file"]
    result = next_step(FOR_EACH, completed, context)
    assert (result.step["id"], result.loop["iteration"]) == ("test-file", 1)
    result = next_step(FOR_EACH, completed + ["test-file"], result.context)
    assert (result.step["id"], result.loop["iteration"]) == ("read-file", 2)
    assert result.next_action["repeatsPerIteration"] is True


def test_progress_past_a_loop_ends_it_even_without_context() -> None:
    result = next_step(FOR_EACH, ["gather", "summarize"], {"files": ["a.py"]})
    assert result.is_complete


def test_completed_loop_id_ends_the_loop() -> None:
    result = next_step(FOR_EACH, ["gather", "each-file"], {"files": ["a.py"]})
    assert result.step["id"] == "summarize"


# --- parallel groups and command steps ------------------------------------------------------

GROUP = {
    "id": "w",
    "steps": [
        {
            "id": "checks",
            "title": "Checks",
            "type": "parallel",
            "steps": [
                {"id": "lint", "title": "Lint", "prompt": "Lint it.", "modelHint": "fast"},
                {
                    "id": "types",
                    "title": "Types",
                    "prompt": "Type-check it.",
                    "modelHint": "fast",
                    "requireConfirmation": True,
                },
                {
                    "id": "docs",
                    "title": "Docs",
                    "prompt": "Check docs.",
                    "modelHint": "fast",
                    "runCondition": {"var": "docs", "equals": True},
                    "validationCriteria": {
                        "type": "contains",
                        "value": "docs ok",
                        "message": "Docs checked",
                    },
                },
            ],
        },
        {"id": "report", "title": "Report", "prompt": "Report."},
    ],
}


def test_parallel_group_is_one_step_with_its_due_members() -> None:
    result = next_step(GROUP, [], {})
    assert result.step["id"] == "checks"
    assert [m["id"] for m in result.step["steps"]] == ["lint", "types"]
    assert result.skipped == ["docs"]
    assert result.guidance["requiresConfirmation"] is True
    assert result.guidance["modelHint"] == "fast"
    assert (
        "## Lint (lint)" in result.guidance["prompt"]
        and "Type-check it." in result.guidance["prompt"]
    )


def test_parallel_group_criteria_are_labelled_by_member() -> None:
    result = next_step(GROUP, [], {"docs": True})
    assert result.guidance["validationCriteria"] == [
        '[docs] Docs checked (the output contains "docs ok")'
    ]


@pytest.mark.parametrize(
    ("completed", "expected", "members"),
    [
        pytest.param(["lint"], "checks", ["types"], id="one-member-done"),
        pytest.param(["lint", "types"], "report", None, id="all-due-members-done"),
        pytest.param(["checks"], "report", None, id="group-id-done"),
    ],
)
def test_parallel_group_progress(completed: list[str], expected: str, members) -> None:
    result = next_step(GROUP, completed, {})
    assert result.step["id"] == expected
    if members is not None:
        assert [m["id"] for m in result.step["steps"]] == members


def test_command_step_guidance() -> None:
    workflow = {
        "id": "w",
        "secrets": ["PYPI_TOKEN"],
        "steps": [
            {
                "id": "publish",
                "title": "Publish",
                "run": {
                    "command": [
                        "twine",
                        "upload",
                        "--repository",
                        "{{parameters.repository}}",
                        "dist/*",
                    ],
                    "env": {"TWINE_PASSWORD": "{{secrets.PYPI_TOKEN}}"},
                    "timeoutSeconds": 600,
                },
            }
        ],
    }
    result = next_step(
        workflow, [], {"parameters": {"repository": "testpypi"}, "PYPI_TOKEN": "leak-me-not"}
    )
    prompt = result.guidance["prompt"]
    assert result.step["id"] == "publish"
    assert "the WorkRail engine executes it" in prompt
    assert '["twine", "upload", "--repository", "testpypi", "dist/*"]' in prompt
    assert "TWINE_PASSWORD={{secrets.PYPI_TOKEN}}" in prompt
    assert "leak-me-not" not in prompt
    assert "Time limit: 600 seconds." in prompt


@pytest.mark.parametrize(
    "workflow",
    [
        pytest.param({"id": "w"}, id="no-steps"),
        pytest.param({"id": "w", "steps": ["understand"]}, id="step-is-a-string"),
        pytest.param(
            {"id": "w", "steps": [{"title": "no id", "prompt": "p"}]}, id="step-without-id"
        ),
        pytest.param(
            {"id": "w", "steps": [{"id": "g", "type": "parallel", "steps": [{"prompt": "p"}]}]},
            id="member-without-id",
        ),
        pytest.param(
            {
                "id": "w",
                "steps": [
                    {"id": "l", "type": "loop", "loop": {"type": "for", "count": 1}, "body": "nope"}
                ],
            },
            id="body-names-no-step",
        ),
        pytest.param(
            {
                "id": "w",
                "steps": [
                    {
                        "id": "s",
                        "title": "t",
                        "prompt": "p",
                        "runCondition": {"var": "a", "gt": "1"},
                    }
                ],
            },
            id="broken-condition",
        ),
    ],
)
def test_malformed_workflows_are_invalid_workflow_errors(workflow: dict) -> None:
    from workrail_engine.errors import InvalidWorkflow

    with pytest.raises(InvalidWorkflow) as caught:
        next_step(workflow, [], {})
    assert caught.value.code == -32002


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(
    st.lists(st.sampled_from(["a.py", "b.md", "c.py", "d.txt"]), max_size=5),
    st.lists(st.sampled_from([None, ".py", ".md"]), min_size=1, max_size=3),
)
def test_for_each_visits_each_item_with_the_body_steps_that_apply(
    items: list[str], suffixes: list
) -> None:
    body = []
    for i, suffix in enumerate(suffixes):
        step = {"id": f"body-{i}", "title": "t", "prompt": "On {{context.it}}"}
        if suffix:
            step["runCondition"] = {"var": "it", "endsWith": suffix}
        body.append(step)
    workflow = {
        "id": "w",
        "steps": [
            {
                "id": "each",
                "type": "loop",
                "loop": {"type": "forEach", "items": "files", "itemVar": "it"},
                "body": body,
            },
            {"id": "end", "title": "t", "prompt": "p"},
        ],
    }
    results = drive(workflow, {"files": items})
    expected = [
        (f"body-{i}", item)
        for item in items
        for i, suffix in enumerate(suffixes)
        if suffix is None or item.endswith(suffix)
    ]
    assert [(r.step["id"], r.loop["item"]) for r in results if r.loop] == expected
    assert ids(results)[-1] == "end"
    assert all(f"On {r.loop['item']}" in r.guidance["prompt"] for r in results if r.loop)


def test_an_agent_that_drops_the_context_is_told_and_cannot_loop_forever() -> None:
    workflow = copy.deepcopy(WHILE)
    completed: list[str] = []
    for call in range(1, 10):
        result = next_step(workflow, completed, {})  # never passes the returned context back
        if result.step["id"] == "ship":
            break
        assert result.step["id"] == "fix"
        if call > 1:
            assert (
                "was not passed back" in result.notes[0]
                and "starts again at iteration 1" in result.notes[0]
            )
        completed.append("fix")
    assert call == 6  # five times "fix" (maxIterations), then the loop is treated as finished
    assert "treated as finished" in result.notes[0]


# --- plans kept per served definition -----------------------------------------------------------


def _served_workflow(directory: Any, first_prompt: str, reads: bool) -> None:
    steps = [
        {"id": "plan", "title": "Plan", "prompt": first_prompt},
        {
            "id": "build",
            "title": "Build",
            "prompt": "Build {{steps.plan.output}}." if reads else "Build it.",
        },
    ]
    workflow = {
        "id": "kept",
        "name": "Kept",
        "description": "d",
        "version": "1.0.0",
        "steps": steps,
    }
    (directory / "kept.json").write_text(json.dumps(workflow))


def test_the_plan_is_made_once_per_served_definition_and_again_after_a_reload(
    tmp_path, monkeypatch
) -> None:
    """The workflow's walk (ids, loop bodies, which outputs are read) was rebuilt on every call:
    half of a workflow_next call. A catalog reload serves a new definition and a new plan."""
    import workrail_engine.serving.navigator as navigator

    made = []
    real = navigator.referenced_step_ids
    monkeypatch.setattr(navigator, "referenced_step_ids", lambda node: made.append(1) or real(node))
    _served_workflow(tmp_path, "Plan it.", reads=True)
    catalog = Catalog([Source("project", tmp_path)], rescan_interval=0)
    for _ in range(3):
        found = next_step(catalog.served("kept"), [], {})
        assert found.step["prompt"] == "Plan it."
        assert found.next_action["outputTo"] == ["steps.plan.output"]
    assert len(made) == 1

    _served_workflow(tmp_path, "Plan again.", reads=False)
    os.utime(tmp_path / "kept.json", ns=(1, 1))  # a change the scan sees even within one mtime tick
    catalog.refresh(force=True)
    found = next_step(catalog.served("kept"), [], {})
    assert found.step["prompt"] == "Plan again."
    assert "outputTo" not in found.next_action
    assert len(made) == 2


def test_the_served_step_is_the_callers_own() -> None:
    """The step handed out is a copy: changing it changes neither the definition nor the next answer."""
    workflow = copy.deepcopy(TASK)
    first = next_step(workflow, [], {})
    first.step["validationCriteria"][0]["value"] = "changed"
    first.step["guidance"].append("added")
    assert workflow == TASK
    again = next_step(workflow, [], {})
    assert again.step["validationCriteria"] == TASK["steps"][0]["validationCriteria"]
    assert again.step["guidance"] == ["Read the tests first."]


def test_criteria_are_checked_once_per_definition_and_broken_ones_every_time(monkeypatch) -> None:
    """Checking a step's criteria was a sixth of a workflow_next call; valid criteria are now
    checked once per definition, and broken ones still fail every call that serves their step."""
    import workrail_engine.serving.navigator as navigator

    checked = []
    real = navigator.require_valid_criteria
    monkeypatch.setattr(navigator, "require_valid_criteria", lambda c: checked.append(1) or real(c))
    workflow = copy.deepcopy(TASK)
    for _ in range(3):
        found = next_step(workflow, [], {})
        assert found.guidance["validationCriteria"] == [
            'Documented assumptions (the output contains "Assumptions")'
        ]
    assert len(checked) == 1

    broken = copy.deepcopy(TASK)
    broken["steps"][0]["validationCriteria"] = [{"type": "regex", "pattern": "("}]
    for _ in range(2):
        with pytest.raises(InvalidCriteria):
            next_step(broken, [], {})
