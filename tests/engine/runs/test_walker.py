"""The walk's view of a waiting prompt step: the same guidance as the stateless navigator."""

from __future__ import annotations

from workrail_engine.runs.walker import waiting_view
from workrail_engine.serving.navigator import next_step

WORKFLOW = {
    "id": "guided",
    "name": "Guided",
    "preconditions": ["The repository builds"],
    "clarificationPrompts": ["Which module?"],
    "metaGuidance": ["Keep commits small"],
    "steps": [
        {
            "id": "plan",
            "title": "Plan",
            "agentRole": "You are a careful reviewer.",
            "prompt": "Plan the change to {{context.module}}.",
            "guidance": ["Read the tests first"],
            "validationCriteria": [
                {"type": "contains", "value": "PLAN", "message": "Start with PLAN"}
            ],
        }
    ],
}


def values(context: dict) -> dict:
    return {"parameters": {}, "context": context, "steps": {}, "secrets": {}}


def test_a_waiting_step_is_guided_like_workflow_next() -> None:
    context = {"module": "cache"}
    waiting = waiting_view("plan", WORKFLOW, WORKFLOW["steps"][0], values(context), first=True)
    stateless = next_step(WORKFLOW, [], context).guidance
    assert waiting["guidance"] == stateless
    prompt = waiting["guidance"]["prompt"]
    for expected in (
        "Role: You are a careful reviewer.",
        "- The repository builds",
        "- Which module?",
        "Plan the change to cache.",
        "- Read the tests first",
        "- Keep commits small",
        "Start with PLAN",
    ):
        assert expected in prompt


def test_preconditions_only_on_the_first_prompt() -> None:
    later = waiting_view("plan", WORKFLOW, WORKFLOW["steps"][0], values({}), first=False)
    assert "The repository builds" not in later["guidance"]["prompt"]
    assert "Keep commits small" in later["guidance"]["prompt"]
