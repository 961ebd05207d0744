"""One set of loop rules: the stateless next step and a run's walk give the same answer.

Each workflow below is walked twice: by an obedient agent through `next_step` (completing every
step it is served, passing the context back) and by `RunWalker` over effects that succeed at once
(no process is spawned). Both must execute the same step keys (``ID[i]`` in a loop) and end the
same way — complete, or with the same coded error's message.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from tests.engine.runs.runs_support import command, workflow
from workrail_engine.definition.steps import step_kind
from workrail_engine.errors import EngineError, InvalidRunState, InvalidWorkflow
from workrail_engine.runs.walker import RunWalker
from workrail_engine.serving.loop_rules import DEFAULT_MAX_ITERATIONS, LoopRules
from workrail_engine.serving.navigator import next_step

# What the agent hands over with the step of the given key (a loop decision), if anything.
Agent = Callable[[str], list[dict[str, Any]] | None]


class Outcome(NamedTuple):
    keys: list[str]  # the steps executed, in order, by their keys
    error: str | None  # the message the walk ended with, None when the workflow completed


def nobody(key: str) -> list[dict[str, Any]] | None:
    return None


def deciding(*continue_at: str) -> Agent:
    """An agent that says "continue" with the steps keyed ``continue_at`` and "stop" otherwise."""

    def decide(key: str) -> list[dict[str, Any]] | None:
        if not key.startswith("decide"):
            return None
        decision = "continue" if key in continue_at else "stop"
        return [{"kind": "wr.loop_control", "decision": decision}]

    return decide


def asked_before(spec: dict[str, Any], *body: dict[str, Any]) -> dict[str, Any]:
    """`looped`, the step ``before`` asking the agent (whose answer may carry a decision)."""
    flow = looped(spec, *body)
    flow["steps"][0] = {"id": "before", "title": "Before", "prompt": "Get ready."}
    return flow


def deciding_before(decision: str) -> Agent:
    """An agent that hands over ``decision`` with the step before the loop, "stop" in it."""

    def decide(key: str) -> list[dict[str, Any]] | None:
        if key == "before":
            return [{"kind": "wr.loop_control", "decision": decision}]
        return (
            [{"kind": "wr.loop_control", "decision": "stop"}] if key.startswith("decide") else None
        )

    return decide


def deciding_until(last: int) -> Agent:
    """An agent that says "continue" in iterations up to ``last`` and hands over nothing after."""

    def decide(key: str) -> list[dict[str, Any]] | None:
        if not key.startswith("decide[") or int(key.removeprefix("decide[")[:-1]) > last:
            return None
        return [{"kind": "wr.loop_control", "decision": "continue"}]

    return decide


def walk_next(flow: dict[str, Any], context: dict[str, Any], agent: Agent) -> Outcome:
    completed: list[str] = []
    keys: list[str] = []
    artifacts = None
    ctx: dict[str, Any] | None = copy.deepcopy(context)
    for _ in range(1000):
        try:
            result = next_step(flow, completed, ctx, artifacts=artifacts)
        except EngineError as error:
            return Outcome(keys, error.message)
        if result.is_complete:
            return Outcome(keys, None)
        assert result.blocked is None, result.blocked
        ctx = result.context
        step = result.step
        assert step is not None
        suffix = f"[{result.loop['iteration']}]" if result.loop else ""
        members = step["steps"] if step_kind(step) == "parallel" else [step]
        for member in members:
            keys.append(member["id"] + suffix)
            completed.append(member["id"])
        artifacts = agent(keys[-1])
    raise AssertionError("the stateless walk did not end")


class SucceedingEffects:
    """`Effects` whose commands succeed at once and whose agent answers by ``agent``."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.recorded: list[dict[str, Any]] = []

    def attempt(self, key, step, values, attempt, deadline) -> dict[str, Any]:
        return {"status": "success", "output": {"exit_code": 0}, "finished_at": 0.0}

    def parallel(self, members, limit, deadline) -> list[dict[str, Any]]:
        return [
            {"step_name": key, "status": "success", "output": None, "step_id": step["id"]}
            for key, step, _ in members
        ]

    def wait(self, key, waiting, deadline) -> dict[str, Any]:
        return {"output": "done", "artifacts": self.agent(key)}

    def sleep_until(self, moment: float) -> None:
        raise AssertionError("no step here fails, so none is retried")

    def record(self, result: dict[str, Any]) -> None:
        self.recorded.append(result)

    def state(self, state: dict[str, Any]) -> None:
        pass


def walk_run(flow: dict[str, Any], context: dict[str, Any], agent: Agent) -> Outcome:
    effects = SucceedingEffects(agent)
    walker = RunWalker(
        flow,
        {},
        copy.deepcopy(context),
        effects,
        deadline=None,
        parallel_limit=None,
        masked_secrets={},
    )
    summary = walker.run()
    keys = [r["step_name"] for r in effects.recorded if r["status"] == "success"]
    return Outcome(keys, summary["error_message"] if summary["status"] == "failed" else None)


# --- the workflows ---------------------------------------------------------------------


def step(step_id: str, **extra: Any) -> dict[str, Any]:
    return command(step_id, ["true"], **extra)


def looped(spec: dict[str, Any], *body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """``before``, a loop ``each`` with ``spec`` over ``body`` (default: one step ``work``), ``after``."""
    loop = {"id": "each", "type": "loop", "loop": spec, "body": list(body) or [step("work")]}
    return workflow(step("before"), {**loop, **extra}, step("after"))


def decide(required: bool = True) -> dict[str, Any]:
    """The prompt step that ends an iteration with the loop decision (or may leave it out)."""
    contract = {"contractRef": "wr.contracts.loop_control", "required": required}
    return {"id": "decide", "title": "Decide", "prompt": "Go on?", "outputContract": contract}


def twice_decided(between: dict[str, Any]) -> dict[str, Any]:
    """An artifact-decided loop ``first`` over `decide`, ``between``, then a second one ``second``
    over ``work`` and ``decide_again``, then ``after``."""
    again = {**decide(), "id": "decide_again"}
    return workflow(
        {"id": "first", "type": "loop", "loop": by_artifact("while"), "body": [decide()]},
        between,
        {
            "id": "second",
            "type": "loop",
            "loop": by_artifact("while"),
            "body": [step("work"), again],
        },
        step("after"),
    )


def by_artifact(kind: str, **spec: Any) -> dict[str, Any]:
    source = {"kind": "artifact_contract", "contractRef": "wr.contracts.loop_control"}
    return {"type": kind, "conditionSource": source, **spec}


def works(*iterations: int, step_id: str = "work") -> list[str]:
    return [f"{step_id}[{i}]" for i in iterations]


PY_ONLY = {"var": "file", "endsWith": ".py"}
FIRST_TWO = {"var": "i", "lt": 3}

# (workflow, context, agent, the keys executed, a part of the error's message or None)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], Agent, list[str], str | None]] = {
    "while, true until maxIterations": (
        looped({"type": "while", "condition": {"var": "go", "equals": True}, "maxIterations": 3}),
        {"go": True},
        nobody,
        ["before", *works(1, 2, 3), "after"],
        None,
    ),
    "while, false at the start": (
        looped({"type": "while", "condition": {"var": "go", "equals": True}}),
        {"go": False},
        nobody,
        ["before", "after"],
        None,
    ),
    "while over its iterationVar": (
        looped(
            {"type": "while", "condition": {"not": {"var": "i", "gte": 3}}, "iterationVar": "i"}
        ),
        {},
        nobody,
        ["before", *works(1, 2, 3), "after"],
        None,
    ),
    "until, its condition holding at once": (
        looped({"type": "until", "condition": {"var": "go", "equals": True}}),
        {"go": True},
        nobody,
        ["before", *works(1), "after"],
        None,
    ),
    "until over its indexVar": (
        looped({"type": "until", "condition": {"var": "n", "gte": 1}, "indexVar": "n"}),
        {},
        nobody,
        ["before", *works(1, 2), "after"],
        None,
    ),
    "until with an invalid condition": (
        looped({"type": "until", "condition": {"var": "x", "matches": "("}}),
        {"x": "a"},
        nobody,
        ["before", *works(1)],
        "The loop condition of step 'each' is invalid",
    ),
    "for, a literal count": (
        looped({"type": "for", "count": 3}),
        {},
        nobody,
        ["before", *works(1, 2, 3), "after"],
        None,
    ),
    "for, a count from the context": (
        looped({"type": "for", "count": "n"}),
        {"n": 2},
        nobody,
        ["before", *works(1, 2), "after"],
        None,
    ),
    "for, a count of 0": (
        looped({"type": "for", "count": 0}),
        {},
        nobody,
        ["before", "after"],
        None,
    ),
    "for, a count past maxIterations": (
        looped({"type": "for", "count": 5, "maxIterations": 2}),
        {},
        nobody,
        ["before", *works(1, 2), "after"],
        None,
    ),
    "for, a negative count": (
        looped({"type": "for", "count": -1}),
        {},
        nobody,
        ["before"],
        "Loop 'each': count must be a non-negative integer, got -1",
    ),
    "for, a negative count from the context": (
        looped({"type": "for", "count": "n"}),
        {"n": -2},
        nobody,
        ["before"],
        "Loop 'each': count must be a non-negative integer, got -2",
    ),
    "for, a string count in the context": (
        looped({"type": "for", "count": "n"}),
        {"n": "three"},
        nobody,
        ["before"],
        "Loop 'each': count must be a non-negative integer, got 'three'",
    ),
    "for, a bool count in the context": (
        looped({"type": "for", "count": "n"}),
        {"n": True},
        nobody,
        ["before"],
        "Loop 'each': count must be a non-negative integer, got True",
    ),
    "for, its count variable missing": (
        looped({"type": "for", "count": "n"}),
        {},
        nobody,
        ["before"],
        "Loop 'each' takes its count from context variable 'n', which is not set",
    ),
    "forEach, literal items and its variables": (
        looped(
            {"type": "forEach", "items": ["a.py", "b.txt", "c.py"], "itemVar": "file"},
            step("work", runCondition=PY_ONLY),
        ),
        {},
        nobody,
        ["before", *works(1, 3), "after"],
        None,
    ),
    "forEach, items from the context": (
        looped({"type": "forEach", "items": "files", "indexVar": "i"}, step("work")),
        {"files": ["x", "y"]},
        nobody,
        ["before", *works(1, 2), "after"],
        None,
    ),
    "forEach, an item variable gone after the loop": (
        workflow(
            {
                "id": "each",
                "type": "loop",
                "loop": {"type": "forEach", "items": ["a", "b"], "itemVar": "file"},
                "body": [step("work")],
            },
            step("after", runCondition={"not": {"var": "file", "equals": "b"}}),
        ),
        {},
        nobody,
        [*works(1, 2), "after"],
        None,
    ),
    "forEach, empty items": (
        looped({"type": "forEach", "items": "files"}),
        {"files": []},
        nobody,
        ["before", "after"],
        None,
    ),
    "forEach, items past maxIterations": (
        looped({"type": "forEach", "items": [1, 2, 3, 4], "maxIterations": 3}),
        {},
        nobody,
        ["before", *works(1, 2, 3), "after"],
        None,
    ),
    "forEach, its items variable missing": (
        looped({"type": "forEach", "items": "files"}),
        {},
        nobody,
        ["before"],
        "Loop 'each' takes its items from context variable 'files', which is not set",
    ),
    "forEach, items holding a string": (
        looped({"type": "forEach", "items": "files"}),
        {"files": "a.py b.py"},
        nobody,
        ["before"],
        "Loop 'each': items must be an array, got str",
    ),
    "forEach, items holding an object": (
        looped({"type": "forEach", "items": "files"}),
        {"files": {"a.py": 1}},
        nobody,
        ["before"],
        "Loop 'each': items must be an array, got dict",
    ),
    "forEach, items holding a number": (
        looped({"type": "forEach", "items": "files"}),
        {"files": 3},
        nobody,
        ["before"],
        "Loop 'each': items must be an array, got int",
    ),
    "forEach, items holding null": (
        looped({"type": "forEach", "items": "files"}),
        {"files": None},
        nobody,
        ["before"],
        "Loop 'each': items must be an array, got null",
    ),
    "forEach over a parallel group of commands": (
        looped(
            {"type": "forEach", "items": ["x", "y"], "itemVar": "item"},
            step("first"),
            {
                "id": "group",
                "type": "parallel",
                "steps": [step("left"), step("right", runCondition={"var": "item", "equals": "y"})],
            },
        ),
        {},
        nobody,
        ["before", "first[1]", "left[1]", "first[2]", "left[2]", "right[2]", "after"],
        None,
    ),
    "a body named by id": (
        workflow(
            step("work"),
            {"id": "each", "type": "loop", "loop": {"type": "for", "count": 2}, "body": "work"},
            step("after"),
        ),
        {},
        nobody,
        [*works(1, 2), "after"],
        None,
    ),
    "a loop whose runCondition is false": (
        looped({"type": "for", "count": 2}, runCondition={"var": "go", "equals": True}),
        {"go": False},
        nobody,
        ["before", "after"],
        None,
    ),
    "an unknown loop type": (
        looped({"type": "repeat", "count": 2}),
        {},
        nobody,
        ["before"],
        "Loop 'each' needs loop.type while, until, for or forEach",
    ),
    "maxIterations not a positive integer": (
        looped({"type": "for", "count": 2, "maxIterations": 0}),
        {},
        nobody,
        ["before"],
        "Loop 'each': maxIterations must be a positive integer, got 0",
    ),
    "an artifact-decided until, stopped by the agent": (
        looped(by_artifact("until"), step("work"), decide()),
        {},
        deciding("decide[1]", "decide[2]"),
        ["before", "work[1]", "decide[1]", "work[2]", "decide[2]", "work[3]", "decide[3]", "after"],
        None,
    ),
    "an artifact-decided while, no decision handed over": (
        looped(by_artifact("while"), step("work"), decide(required=False)),
        {},
        nobody,
        ["before", "work[1]", "decide[1]"],
        "Loop 'each' decides whether to run again from a loop-control artifact",
    ),
    "an artifact-decided while, no decision needed on the last pass": (
        looped(by_artifact("while", maxIterations=2), step("work"), decide(required=False)),
        {},
        deciding_until(1),
        ["before", "work[1]", "decide[1]", "work[2]", "decide[2]", "after"],
        None,
    ),
    # As upstream reads it: the answer just given decides even the first pass.
    "an artifact-decided while, stopped with the step before it": (
        asked_before(by_artifact("while"), step("work"), decide()),
        {},
        deciding_before("stop"),
        ["before", "after"],
        None,
    ),
    "an artifact-decided while, continued with the step before it": (
        asked_before(by_artifact("while"), step("work"), decide()),
        {},
        deciding_before("continue"),
        ["before", "work[1]", "decide[1]", "after"],
        None,
    ),
    # The decision belongs to the answer that carried it: a command in between leaves none.
    "a command between an artifact loop stopped by the agent and a second one": (
        twice_decided(step("middle")),
        {},
        deciding(),
        ["decide[1]", "middle", "work[1]", "decide_again[1]", "after"],
        None,
    ),
    "a parallel group between an artifact loop stopped by the agent and a second one": (
        twice_decided({"id": "middle", "type": "parallel", "steps": [step("left"), step("right")]}),
        {},
        deciding(),
        ["decide[1]", "left", "right", "work[1]", "decide_again[1]", "after"],
        None,
    ),
    "an artifact-decided until that wants more than maxIterations": (
        looped(by_artifact("until", maxIterations=2), decide()),
        {},
        deciding("decide[1]", "decide[2]", "decide[3]"),
        ["before", "decide[1]", "decide[2]", "after"],
        None,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_next_step_and_a_run_walk_a_loop_alike(case: str) -> None:
    flow, context, agent, keys, error = CASES[case]
    stateless = walk_next(flow, context, agent)
    run = walk_run(flow, context, agent)
    assert stateless == run, f"workflow_next: {stateless}\nrun: {run}"
    assert run.keys == keys
    if error is None:
        assert run.error is None
    else:
        assert run.error is not None and error in run.error, run.error


def test_the_rules_are_read_once_and_refuse_a_bad_definition() -> None:
    rules = LoopRules({"id": "each", "loop": {"type": "forEach", "items": "files"}})
    assert rules.limit == DEFAULT_MAX_ITERATIONS
    assert rules.total({"files": [1, 2]}) == 2
    with pytest.raises(InvalidRunState):
        rules.item(3, {"files": [1, 2]})
    with pytest.raises(InvalidWorkflow):
        LoopRules({"id": "each", "loop": {"type": "forEach", "maxIterations": True}})
