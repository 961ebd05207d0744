"""The compile step (`workrail_engine/compile/__init__.py`): each problem with its code and\npointer, the good forms, what reaches the prompt, and what is left over."""

from __future__ import annotations

import copy

import pytest

from tests.engine.compile.compile_workflows import compile_with_routines, review_pass_call
from workrail_engine.compile import compile_workflow
from workrail_engine.compile.refs import SNIPPETS


@pytest.mark.parametrize(
    ("workflow", "code", "pointer"),
    [
        pytest.param(
            {
                "id": "w",
                "steps": [{"id": "a", "templateCall": {"templateId": "wr.templates.routine.nope"}}],
            },
            "WR801",
            "/steps/0/templateCall/templateId",
            id="unknown-template",
        ),
        pytest.param(
            review_pass_call({"area": "auth"}),
            "WR802",
            "/steps/1/templateCall/args",
            id="missing-arg",
        ),
        pytest.param(
            review_pass_call({"area": {"x": 1}, "depth": 1}),
            "WR803",
            "/steps/1/templateCall/args/area",
            id="object-arg",
        ),
        pytest.param(
            {
                "id": "w",
                "steps": [
                    {"id": "a", "templateCall": {"templateId": "wr.templates.routine.nested"}}
                ],
            },
            "WR804",
            "/steps/0/templateCall",
            id="recursive-routine",
        ),
        pytest.param(
            {"id": "w", "features": ["wr.features.nope"], "steps": [{"id": "a", "prompt": "p"}]},
            "WR805",
            "/features/0",
            id="unknown-feature",
        ),
        pytest.param(
            {
                "id": "w",
                "steps": [
                    {
                        "id": "a",
                        "promptBlocks": {
                            "constraints": [[{"kind": "ref", "refId": "wr.refs.nope"}]]
                        },
                    }
                ],
            },
            "WR806",
            "/steps/0/promptBlocks/constraints/0/0/refId",
            id="unknown-ref-part",
        ),
        pytest.param(
            {"id": "w", "steps": [{"id": "a", "prompt": "See {{wr.bindings.reviewer}}."}]},
            "WR807",
            "/steps/0/prompt",
            id="undeclared-binding",
        ),
        pytest.param(
            {"id": "w", "steps": [{"id": "a", "prompt": "p", "title": "{{wr.something.else}}"}]},
            "WR808",
            "/steps/0/title",
            id="leftover-wr-token",
        ),
        pytest.param(
            {
                "id": "w",
                "steps": [
                    {"id": "review.scan", "prompt": "p"},
                    {
                        "id": "review",
                        "templateCall": {
                            "templateId": "wr.templates.routine.review-pass",
                            "args": {"area": "a", "depth": 1},
                        },
                    },
                ],
            },
            "WR809",
            "/steps/1/id",
            id="duplicate-after-expansion",
        ),
        pytest.param(
            {"id": "w", "steps": [{"id": "a", "prompt": "p", "promptBlocks": {"goal": "g"}}]},
            "WR810",
            "/steps/0",
            id="prompt-and-blocks",
        ),
    ],
)
def test_each_problem_is_reported_with_its_code_and_pointer(
    workflow: dict, code: str, pointer: str
) -> None:
    compiled = compile_with_routines(workflow)
    assert [(p.code, p.pointer) for p in compiled.problems] == [(code, pointer)], compiled.problems


@pytest.mark.parametrize(
    "workflow",
    [
        pytest.param(review_pass_call({"area": "auth", "depth": 1}), id="all-args"),
        pytest.param(
            {
                "id": "w",
                "features": ["wr.features.capabilities"],
                "steps": [{"id": "a", "prompt": "p"}],
            },
            id="known-feature",
        ),
        pytest.param(
            {
                "id": "w",
                "extensionPoints": [{"slotId": "reviewer", "purpose": "p", "default": "wr.review"}],
                "steps": [
                    {"id": "a", "prompt": "See {{wr.bindings.reviewer}}; {{wr.refs.memory_query}}"}
                ],
            },
            id="declared-binding-known-ref",
        ),
    ],
)
def test_good_forms_compile_clean(workflow: dict) -> None:
    assert compile_with_routines(workflow).problems == ()


def test_features_refs_and_bindings_reach_the_prompt() -> None:
    workflow = {
        "id": "w",
        "features": ["wr.features.memory_context"],
        "extensionPoints": [{"slotId": "reviewer", "purpose": "p", "default": "wr.review"}],
        "steps": [
            {
                "id": "blocks",
                "title": "B",
                "promptBlocks": {"goal": "Use {{wr.bindings.reviewer}}", "constraints": ["Mine"]},
            },
            {"id": "raw", "title": "R", "prompt": "Raw prompts are the author's own."},
        ],
    }
    compiled = compile_with_routines(workflow, {"reviewer": "team-review"})
    blocks, raw = compiled.definition["steps"]
    assert blocks["prompt"].startswith("## Goal\nUse team-review\n\n## Constraints\n- Mine\n- ")
    assert SNIPPETS["wr.refs.memory_usage"] in blocks["prompt"]
    assert raw["prompt"] == "Raw prompts are the author's own."  # features touch blocks only
    assert compiled.bindings == {"reviewer": "team-review"}


def test_loop_bodies_and_inline_templates_are_compiled() -> None:
    workflow = {
        "id": "w",
        "steps": [
            {
                "id": "loop",
                "type": "loop",
                "loop": {"type": "for", "count": 2, "maxIterations": 2},
                "body": [
                    {"id": "blocks", "promptBlocks": {"goal": "Pass"}},
                    {
                        "id": "again",
                        "templateCall": {
                            "templateId": "wr.templates.routine.review-pass",
                            "args": {"area": "x", "depth": 1},
                        },
                    },
                ],
            }
        ],
    }
    body = compile_with_routines(workflow).definition["steps"][0]["body"]
    assert [s["id"] for s in body] == ["blocks", "again.scan", "again.report"]
    assert body[0]["prompt"] == "## Goal\nPass"


# The feature every case names: a list where a feature's name belongs.
FEATURE_NOT_A_NAME = ("WR805", "/features/0", "Unknown feature [1] (known: wr.features.")


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        pytest.param(
            {"id": "a", "prompt": "p", "guidance": 5},
            [FEATURE_NOT_A_NAME],
            id="guidance-not-a-list",
        ),
        pytest.param(
            {"id": "a", "prompt": "p", "promptFragments": 3},
            [FEATURE_NOT_A_NAME],
            id="fragments-not-a-list",
        ),
        pytest.param(
            {"id": "a", "promptBlocks": {"goal": [{"kind": "ref", "refId": [1]}]}},
            [
                FEATURE_NOT_A_NAME,
                (
                    "WR806",
                    "/steps/0/promptBlocks/goal/0/refId",
                    "Step 'a' refers to [1], which is not a known snippet",
                ),
            ],
            id="unhashable-ref-id",
        ),
    ],
)
def test_a_malformed_file_compiles_to_problems_not_exceptions(
    step: dict, expected: list[tuple[str, str, str]]
) -> None:
    """`workrail validate` and the editor's hover compile files that may not pass the schema:
    what the compile reads is a problem with its code, pointer and words; a value it does not
    read (guidance or fragments that are no list) is left to the schema's WR101."""
    compiled = compile_workflow({"id": "w", "features": [[1]], "steps": [step]})
    assert [(p.code, p.pointer) for p in compiled.problems] == [(c, p) for c, p, _ in expected]
    for problem, (_, _, words) in zip(compiled.problems, expected, strict=True):
        assert problem.message.startswith(words), problem.message


def test_the_compile_copies_the_workflow_as_deepcopy_does():
    """`compile_workflow` never changes its input; its own copy (faster than deepcopy on JSON
    values) keeps what deepcopy keeps: an object met twice (a YAML alias) stays one object, and
    any other value (a YAML timestamp) is copied by deepcopy."""
    import datetime

    from workrail_engine.compile.pipeline import _copied

    shared = {"var": "mode", "equals": "fast"}
    when = datetime.datetime(2026, 11, 26, 12, 0)
    workflow = {
        "id": "w",
        "steps": [
            {"id": "a", "runCondition": shared, "tags": ["x", 1, 2.5, True, None]},
            {"id": "b", "runCondition": shared, "at": when, "set": {1, 2}},
        ],
    }
    copied = _copied(workflow)
    assert copied == copy.deepcopy(workflow) == workflow
    first, second = copied["steps"]
    assert first["runCondition"] is second["runCondition"]
    assert first["runCondition"] is not shared and copied["steps"] is not workflow["steps"]
    assert second["set"] is not workflow["steps"][1]["set"]
