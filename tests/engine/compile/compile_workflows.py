"""The routines the compile tests call, and a workflow calling one of them."""

from __future__ import annotations

from typing import Any

from workrail_engine.compile import CompiledWorkflow, compile_workflow

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


def compile_with_routines(workflow: dict, bindings: dict | None = None) -> CompiledWorkflow:
    return compile_workflow(workflow, ROUTINES.get, bindings)


def review_pass_call(args: dict, **extra: Any) -> dict:
    """A workflow whose second step calls the review-pass routine with ``args``."""
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
