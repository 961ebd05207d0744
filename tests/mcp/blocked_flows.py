"""Workflows whose first step sends back one kind of blocked answer each, with the answer that
provokes it (tests/mcp/test_blocked_answers.py)."""

from __future__ import annotations

from typing import Any

ASSESSMENT = {
    "id": "risk",
    "purpose": "How risky the change is",
    "dimensions": [{"id": "safety", "purpose": "Is it safe", "levels": ["low", "high"]}],
}


def _flow(kind: str, first: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": f"blocked-{kind}",
        "name": f"Blocked {kind}",
        "description": f"A first step that sends back {kind}",
        "version": "1.0.0",
        **extra,
        "steps": [
            {"id": "first", "title": "First", "prompt": "Do the first thing", **first},
            {"id": "second", "title": "Second", "prompt": "Do the second thing"},
        ],
    }


REVIEW = "wr.contracts.review_verdict"


def _reviewed(kind: str, artifacts: list[Any], code: str) -> tuple[Any, ...]:
    """A step whose output contract is a review verdict, answered with ``artifacts``."""
    pointer = {"kind": "output_contract", "contractRef": REVIEW}
    return (
        _flow(kind, {"outputContract": {"contractRef": REVIEW}}),
        "reviewed",
        artifacts,
        code,
        pointer,
    )


# kind -> (workflow, the answer's notes, its artifacts, the blocker's code, its pointer)
BLOCKED: dict[str, tuple[Any, ...]] = {
    "notes": (
        _flow("notes", {}),
        "   ",
        [],
        "MISSING_REQUIRED_NOTES",
        {"kind": "workflow_step", "stepId": "first"},
    ),
    "criteria": (
        _flow(
            "criteria",
            {"validationCriteria": [{"type": "contains", "value": "PLAN", "message": "Say PLAN"}]},
        ),
        "no idea yet",
        [],
        "INVALID_REQUIRED_OUTPUT",
        {"kind": "output_contract", "contractRef": "wr.validationCriteria"},
    ),
    "contract-missing": _reviewed("contract-missing", [], "MISSING_REQUIRED_OUTPUT"),
    "contract-invalid": _reviewed(
        "contract-invalid",
        [{"kind": "wr.review_verdict", "verdict": "so-so"}],
        "INVALID_REQUIRED_OUTPUT",
    ),
    "assessment": (
        _flow("assessment", {"assessmentRefs": ["risk"]}, assessments=[ASSESSMENT]),
        "assessed",
        [{"kind": "wr.assessment", "assessmentId": "risk", "dimensions": {"safety": "medium"}}],
        "INVALID_REQUIRED_OUTPUT",
        {"kind": "output_contract", "contractRef": "wr.contracts.assessment"},
    ),
    "followup": (
        _flow(
            "followup",
            {
                "assessmentRefs": ["risk"],
                "assessmentConsequences": [
                    {
                        "when": {"anyEqualsLevel": "high"},
                        "effect": {"kind": "require_followup", "guidance": "Add a rollback plan"},
                    }
                ],
            },
            assessments=[ASSESSMENT],
        ),
        "assessed",
        [{"kind": "wr.assessment", "assessmentId": "risk", "dimensions": {"safety": "high"}}],
        "ASSESSMENT_FOLLOWUP_REQUIRED",
        {"kind": "assessment_dimension", "assessmentId": "risk", "dimensionId": "safety"},
    ),
    "confirmation": (
        _flow("confirmation", {"requireConfirmation": True}),
        "did the first thing",
        [],
        "USER_ONLY_DEPENDENCY",
        {"kind": "workflow_step", "stepId": "first"},
    ),
}
