"""The compile step: templates, bindings, features, refs, prompt blocks, and what is left over."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from workrail_engine.compile import compile_workflow
from workrail_engine.compile.bindings import project_bindings
from workrail_engine.compile.refs import SNIPPETS

ROUTINE = {
    "id": "routine-review-pass",
    "name": "Review pass",
    "metaGuidance": ["Stay within the files named."],
    "steps": [
        {
            "id": "scan",
            "title": "Scan {area}",
            "prompt": "Scan {area} at depth {depth}; keep {{notes}}.",
        },
        {
            "id": "report",
            "title": "Report",
            "prompt": "Report on {area}.",
            "guidance": ["Be brief."],
        },
    ],
}
NESTED = {"id": "wr.routine-nested", "steps": [{"id": "x", "templateCall": {"templateId": "t"}}]}
ROUTINES = {r["id"]: r for r in (ROUTINE, NESTED)}


def _compile(workflow: dict, bindings: dict | None = None) -> Any:
    return compile_workflow(workflow, ROUTINES.get, bindings)


def _calls(args: dict, **extra: Any) -> dict:
    return {
        "id": "calls",
        "steps": [
            {"id": "start", "title": "Start", "prompt": "Go."},
            {
                "id": "review",
                "title": "Review",
                "templateCall": {"templateId": "wr.templates.routine.review-pass", "args": args},
                **extra,
            },
        ],
    }


def test_a_template_call_injects_the_routine_steps() -> None:
    workflow = _calls({"area": "auth", "depth": 2}, runCondition={"var": "deep", "equals": True})
    before = copy.deepcopy(workflow)
    compiled = _compile(workflow)
    assert compiled.ok, compiled.problems
    assert workflow == before  # the file as written is untouched
    steps = compiled.definition["steps"]
    assert [s["id"] for s in steps] == ["start", "review.scan", "review.report"]
    assert steps[1]["title"] == "Scan auth"
    assert steps[1]["prompt"] == "Scan auth at depth 2; keep {{notes}}."
    assert steps[1]["guidance"] == ["Stay within the files named."]
    assert steps[2]["guidance"] == ["Be brief.", "Stay within the files named."]
    assert steps[1]["runCondition"] == {"var": "deep", "equals": True}


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
            _calls({"area": "auth"}), "WR802", "/steps/1/templateCall/args", id="missing-arg"
        ),
        pytest.param(
            _calls({"area": {"x": 1}, "depth": 1}),
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
    compiled = _compile(workflow)
    assert [(p.code, p.pointer) for p in compiled.problems] == [(code, pointer)], compiled.problems


@pytest.mark.parametrize(
    "workflow",
    [
        pytest.param(_calls({"area": "auth", "depth": 1}), id="all-args"),
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
    assert _compile(workflow).problems == ()


def test_prompt_blocks_render_as_markdown_sections_in_order() -> None:
    workflow = {
        "id": "w",
        "steps": [
            {
                "id": "a",
                "title": "A",
                "promptBlocks": {
                    "verify": ["Tests pass"],
                    "outputRequired": {"plan": "the plan", "risks": "the risks"},
                    "procedure": [
                        "Read",
                        [{"kind": "text", "text": "Write "}, {"kind": "text", "text": "it"}],
                    ],
                    "constraints": ["No new deps"],
                    "goal": "Plan the change",
                },
            }
        ],
    }
    step = _compile(workflow).definition["steps"][0]
    assert "promptBlocks" not in step
    assert step["prompt"] == (
        "## Goal\nPlan the change\n\n"
        "## Constraints\n- No new deps\n\n"
        "## Procedure\n1. Read\n2. Write it\n\n"
        "## Output Required\n- **plan**: the plan\n- **risks**: the risks\n\n"
        "## Verify\n- Tests pass"
    )


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
    compiled = _compile(workflow, {"reviewer": "team-review"})
    blocks, raw = compiled.definition["steps"]
    assert blocks["prompt"].startswith("## Goal\nUse team-review\n\n## Constraints\n- Mine\n- ")
    assert SNIPPETS["wr.refs.memory_usage"] in blocks["prompt"]
    assert raw["prompt"] == "Raw prompts are the author's own."  # features touch blocks only
    assert compiled.bindings == {"reviewer": "team-review"}


def test_project_bindings_file_per_workflow_or_flat(tmp_path) -> None:
    (tmp_path / ".workrail").mkdir()
    file = tmp_path / ".workrail" / "bindings.json"
    file.write_text('{"w": {"reviewer": "ours"}, "other": {"reviewer": "theirs"}}')
    assert project_bindings(tmp_path, "w") == {"reviewer": "ours"}
    file.write_text('{"reviewer": "flat"}')
    assert project_bindings(tmp_path, "anything") == {"reviewer": "flat"}
    file.write_text("not json")
    assert project_bindings(tmp_path, "w") == {}


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
    body = _compile(workflow).definition["steps"][0]["body"]
    assert [s["id"] for s in body] == ["blocks", "again.scan", "again.report"]
    assert body[0]["prompt"] == "## Goal\nPass"


def test_a_ref_part_may_point_at_a_declared_reference() -> None:
    workflow = {
        "id": "w",
        "references": [
            {
                "id": "policy",
                "title": "Release policy",
                "source": "docs/policy.md",
                "purpose": "What a release needs",
                "authoritative": True,
            }
        ],
        "steps": [
            {
                "id": "a",
                "promptBlocks": {
                    "constraints": [
                        [{"kind": "text", "text": "Follow "}, {"kind": "ref", "refId": "policy"}]
                    ]
                },
            }
        ],
    }
    compiled = _compile(workflow)
    assert compiled.problems == ()
    assert compiled.definition["steps"][0]["prompt"] == (
        '## Constraints\n- Follow "Release policy" (docs/policy.md): What a release needs '
        "(authoritative: follow it)"
    )


# -- the size bound (WR811) ---------------------------------------------------------------------

AMPLIFIER = {"id": "routine-amplify", "steps": [{"id": "s", "title": "t", "prompt": "{a} " * 1000}]}
MEMORY_REF = "{{wr.refs.memory_usage}}"


def _amplified(arg_length: int) -> dict:
    call = {"templateId": "wr.templates.routine.amplify", "args": {"a": "x" * arg_length}}
    return {"id": "w", "steps": [{"id": "call", "templateCall": call}]}


def _bound(default_length: int, tokens: int = 1000) -> dict:
    return {
        "id": "w",
        "extensionPoints": [{"slotId": "slot", "purpose": "p", "default": "y" * default_length}],
        "steps": [{"id": "a", "prompt": "{{wr.bindings.slot}} " * tokens}],
    }


def _many_calls(calls: int) -> dict:
    """Each call injects 10 steps of 60,000 characters: 600,000 per call."""
    return {
        "id": "w",
        "steps": [
            {"id": f"c{i}", "templateCall": {"templateId": "wr.templates.routine.wide"}}
            for i in range(calls)
        ],
    }


WIDE = {"id": "routine-wide", "steps": [{"id": f"s{i}", "prompt": "z" * 60_000} for i in range(10)]}
SIZE_ROUTINES = {r["id"]: r for r in (AMPLIFIER, WIDE, ROUTINE)}


@pytest.mark.parametrize(
    ("workflow", "pointer", "per"),
    [
        # 1,000 placeholders × a 100 KB argument: 100 MB asked for
        pytest.param(_amplified(100_000), "/steps/0/templateCall", "step", id="routine-argument"),
        # 1,000 tokens × a 1 MB default: 1 GB asked for
        pytest.param(_bound(1_000_000), "/steps/0/prompt", "step", id="binding-default"),
        pytest.param(
            {"id": "w", "steps": [{"id": "a", "prompt": MEMORY_REF * 5000}]},
            "/steps/0/prompt",
            "step",
            id="ref-tokens",
        ),
        # 15 calls of 600,000 characters: past 8 Mi in all, each step within its limit
        pytest.param(_many_calls(15), "/steps/13/templateCall", "workflow", id="many-calls"),
    ],
)
def test_a_workflow_that_would_compile_too_large_is_wr811_and_never_built(
    workflow: dict, pointer: str, per: str
) -> None:
    import tracemalloc

    tracemalloc.start()
    try:
        compiled = compile_workflow(workflow, SIZE_ROUTINES.get)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(p.code, p.pointer) for p in compiled.problems] == [("WR811", pointer)]
    message = compiled.problems[0].message
    assert ("would compile to more than" if per == "step" else "compiled workflow") in message
    # what the oversized text would have cost is never allocated (at most the 8 Mi allowed)
    assert peak < 40 * 1024 * 1024, peak


@pytest.mark.parametrize(
    "workflow",
    [
        pytest.param(_amplified(500), id="routine-argument"),  # 500,000 characters
        pytest.param(_bound(500), id="binding-default"),
        pytest.param({"id": "w", "steps": [{"id": "a", "prompt": MEMORY_REF * 1000}]}, id="refs"),
        pytest.param(_many_calls(12), id="many-calls"),  # 7.2 M characters in all
    ],
)
def test_the_same_within_the_limits_compiles(workflow: dict) -> None:
    compiled = compile_workflow(workflow, SIZE_ROUTINES.get)
    assert compiled.ok, compiled.problems


def test_problems_after_an_injection_point_at_the_step_as_written() -> None:
    """The routine injects two steps before the oversized one: its pointer stays /steps/1."""
    workflow = _calls({"area": "a", "depth": 1})
    workflow["steps"][0] = workflow["steps"][1]
    workflow["steps"][1] = {"id": "big", "prompt": MEMORY_REF * 5000}
    compiled = compile_workflow(workflow, SIZE_ROUTINES.get)
    assert [(p.code, p.pointer) for p in compiled.problems] == [("WR811", "/steps/1/prompt")]


@pytest.mark.parametrize(
    "step",
    [
        pytest.param({"id": "a", "prompt": "p", "guidance": 5}, id="guidance-not-a-list"),
        pytest.param({"id": "a", "prompt": "p", "promptFragments": 3}, id="fragments-not-a-list"),
        pytest.param(
            {"id": "a", "promptBlocks": {"goal": [{"kind": "ref", "refId": [1]}]}},
            id="unhashable-ref-id",
        ),
    ],
)
def test_a_malformed_file_compiles_to_problems_not_exceptions(step: dict) -> None:
    """`workrail validate` and the editor's hover compile files that may not pass the schema."""
    compile_workflow({"id": "w", "features": [[1]], "steps": [step]})


def test_the_compile_copies_the_workflow_as_deepcopy_does():
    """`compile_workflow` never changes its input; its own copy (faster than deepcopy on JSON
    values) keeps what deepcopy keeps: an object met twice (a YAML alias) stays one object, and
    any other value (a YAML timestamp) is copied by deepcopy."""
    import copy
    import datetime

    from workrail_engine.compile import _copied

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
