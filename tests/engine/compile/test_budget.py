"""The size bound (WR811): a workflow that would compile too large is never built."""

from __future__ import annotations

import pytest

from tests.engine.compile.compile_workflows import ROUTINE, review_pass_call
from workrail_engine.compile import compile_workflow

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
    workflow = review_pass_call({"area": "a", "depth": 1})
    workflow["steps"][0] = workflow["steps"][1]
    workflow["steps"][1] = {"id": "big", "prompt": MEMORY_REF * 5000}
    compiled = compile_workflow(workflow, SIZE_ROUTINES.get)
    assert [(p.code, p.pointer) for p in compiled.problems] == [("WR811", "/steps/1/prompt")]
