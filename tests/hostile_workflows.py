"""Hostile workflows of issue 25, built once for the CLI, MCP and language-server tests."""

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


BOUND_FLOW: dict[str, Any] = {
    "id": "bound-flow",
    "name": "Bound",
    "description": "A binding slot with a default",
    "extensionPoints": [{"slotId": "checker", "purpose": "p", "default": "team-check"}],
    "steps": [{"id": "only", "title": "Only", "prompt": "Ask {{wr.bindings.checker}}."}],
}


# A 30 KB routine whose prompt holds 10,000 {a} placeholders, called with a 100 KB argument:
# 1 GB of prompt once compiled (issue 25 item 1).
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
