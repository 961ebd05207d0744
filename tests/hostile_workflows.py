"""Hostile workflows (docs/security.md), built once for the CLI, MCP and language-server tests."""

from __future__ import annotations

from typing import Any


def many_findings_workflow(count: int, workflow_id: str = "many-findings") -> dict[str, Any]:
    """One prompt holding ``count`` references to an undeclared parameter."""
    prompt = " ".join(["{{parameters.nope}}"] * count)
    return {
        "id": workflow_id,
        "name": "Many findings",
        "description": "One prompt with thousands of undeclared parameters",
        "steps": [{"id": "only", "title": "Only", "prompt": prompt}],
    }


def alias_bomb(levels: int = 7, fan_out: int = 10) -> str:
    """The 'billion laughs' in YAML: each level a list of ``fan_out`` aliases of the level below
    (10 ** 8 strings from fewer than 500 bytes with the defaults)."""
    lines = ["a0: &a0 [" + ",".join(['"lol"'] * fan_out) + "]"]
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * fan_out) + "]")
    return "\n".join(lines) + "\n"


def deep_run_condition_workflow(levels: int) -> dict[str, Any]:
    """A workflow whose one step's runCondition nests ``levels`` `not`s."""
    condition: dict[str, Any] = {"var": "x", "equals": 1}
    for _ in range(levels):
        condition = {"not": condition}
    return {
        "id": "deep-condition",
        "name": "Deep",
        "description": "A runCondition nested far too deep",
        "steps": [{"id": "only", "title": "Only", "prompt": "p", "runCondition": condition}],
    }


BOUND_FLOW: dict[str, Any] = {
    "id": "bound-flow",
    "name": "Bound",
    "description": "A binding slot with a default",
    "extensionPoints": [{"slotId": "checker", "purpose": "p", "default": "team-check"}],
    "steps": [{"id": "only", "title": "Only", "prompt": "Ask {{wr.bindings.checker}}."}],
}


# A 30 KB routine whose prompt holds 10,000 {a} placeholders, called with a 100 KB argument:
# 1 GB of prompt once compiled (WR811 refuses it).
AMPLIFIER_ROUTINE: dict[str, Any] = {
    "id": "routine-amplify",
    "name": "Amplify",
    "description": "A routine whose prompt repeats its argument",
    "steps": [{"id": "say", "title": "Say", "prompt": "{a}" * 10_000}],
}
AMPLIFIED_CALLER: dict[str, Any] = {
    "id": "amplified",
    "name": "Amplified",
    "description": "Calls the amplifying routine with a long argument",
    "steps": [
        {
            "id": "call",
            "title": "Call",
            "templateCall": {
                "templateId": "wr.templates.routine.amplify",
                "args": {"a": "x" * 100_000},
            },
        }
    ],
}


# 36 bytes: RE2 refuses the lookahead, and the backtracking engine's compilation of the counted
# repetitions allocated without limit.
REGEX_COMPILE_BOMB = "(?!x)(?:(?:a{1000}){1000}){1000}"
# Exponential backtracking on "a" * 30: each match runs until its own time limit.
BACKTRACKING = "(?!z)(a|aa)*[bc]"
SLOW_TEXT = "a" * 30


def regex_rules_workflow(pattern: str, rules: int = 1, workflow_id: str = "regex-rules") -> dict:
    """One prompt step whose validationCriteria are ``rules`` regex rules of ``pattern``, then
    ``rules`` steps that each run only when ``context.x`` matches ``pattern``."""
    criteria = [{"type": "regex", "pattern": pattern, "message": f"rule {i}"} for i in range(rules)]
    guarded = [
        {
            "id": f"guarded-{i}",
            "title": "Guarded",
            "prompt": "p",
            "runCondition": {"var": "x", "matches": pattern},
        }
        for i in range(rules)
    ]
    return {
        "id": workflow_id,
        "name": "Regex rules",
        "description": "Backtracking regexes in rules and conditions",
        "steps": [
            {"id": "answer", "title": "Answer", "prompt": "p", "validationCriteria": criteria},
            *guarded,
            {"id": "last", "title": "Last", "prompt": "p"},
        ],
    }
