"""The workflow the lint tests change one thing in, and the check every code's bad and good
example goes through (each module of workrail_engine/lint/ has its codes' table in its own test
module)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from workrail_engine.lint import LintResult, lint_text

Change = Callable[[dict[str, Any]], object]
# code, bad change, good change, text the diagnostic must sit on (None: anywhere)
Case = tuple[str, Change, Change, str | None]

BASE = {
    "id": "demo",
    "name": "Demo",
    "version": "1.0.0",
    # upstream 3.x definitions that steps may refer to (WR701, WR702)
    "functionDefinitions": [{"name": "checks", "definition": "Run the checks and report."}],
    "assessments": [
        {
            "id": "quality",
            "purpose": "How good it is",
            "dimensions": [{"id": "overall", "purpose": "Overall", "levels": ["low", "high"]}],
        }
    ],
    "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
    "secrets": ["API_TOKEN"],
    "steps": [
        {"id": "plan", "title": "Plan", "prompt": "Plan the change for {{parameters.target}}."},
        {
            "id": "build",
            "run": {
                "command": ["make", "build", "{{parameters.target}}"],
                "timeoutSeconds": 60,
                "env": {"TOKEN": "{{secrets.API_TOKEN}}"},
            },
        },
        {"id": "review", "title": "Review", "prompt": "Review {{steps.plan.output}}."},
    ],
}


MIXED_GROUP = {
    "id": "fan-out",
    "type": "parallel",
    "title": "Fan out",
    "steps": [{"id": "lint", "run": {"command": ["ruff", "check"], "timeoutSeconds": 60}}],
    "parallelDelegations": [{"workflowId": "wr.routine-ideation", "goal": "Ideas"}],
}


def lint(workflow: dict[str, Any], path: str = "demo.json") -> LintResult:
    text = json.dumps(workflow, indent=2, ensure_ascii=False)
    return lint_text(text, path)


def mutate(change: Change) -> dict[str, Any]:
    workflow = copy.deepcopy(BASE)
    change(workflow)
    return workflow


def set_at(path: Sequence[str | int], value: Any) -> Change:
    """The change that sets the value at ``path`` (keys and list indexes) of a workflow."""

    def change(w: dict[str, Any]) -> None:
        node: Any = w
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value

    return change


def bad_and_good(cases: Sequence[Case]) -> pytest.MarkDecorator:
    """Parametrizes a test by a table of cases, each named by its code."""
    return pytest.mark.parametrize(
        ("code", "bad", "good", "on_text"), [pytest.param(*case, id=case[0]) for case in cases]
    )


def check_bad_and_good(code: str, bad: Change, good: Change, on_text: str | None) -> None:
    """The bad change raises ``code`` (placed on ``on_text``); the good one leaves BASE clean."""
    result = lint(mutate(bad))
    found = [d for d in result.diagnostics if d.code == code]
    assert found, f"{code} not reported; got {[(d.code, d.message) for d in result.diagnostics]}"
    if on_text is not None:
        text = result.document.text
        assert text[found[0].span.start : found[0].span.end] == on_text
    clean = lint(mutate(good))
    assert [d.code for d in clean.diagnostics] == [], [d.message for d in clean.diagnostics]
