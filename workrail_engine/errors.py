"""Errors at the engine boundary: values with stable codes that adapters map to their protocol.

The codes are the source specs' JSON-RPC codes (design §5), so the MCP server can pass them
through unchanged and the CLI can print them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "EngineError",
    "InvalidCriteria",
    "InvalidParams",
    "InvalidRunState",
    "InvalidWorkflow",
    "RUN_ID_PREFIX",
    "RunNotFound",
    "SecurityViolation",
    "StepNotFound",
    "StorageError",
    "WorkflowNotFound",
    "closest",
]


def closest(name: str, candidates: Iterable[str], n: int = 3, cutoff: float = 50.0) -> list[str]:
    """The candidates most like ``name``, best first, ties by name (for "did you mean" hints).

    rapidfuzz's normalized Indel similarity is difflib's ratio computed in C++: over the 2,800 step
    ids of a large workflow it answers in well under a millisecond where difflib took ~100 ms.
    """
    from rapidfuzz import fuzz, process

    matches = process.extract(
        name, list(candidates), scorer=fuzz.ratio, limit=None, score_cutoff=cutoff
    )
    ranked = sorted(matches, key=lambda match: (-match[1], match[0]))
    return [match[0] for match in ranked[:n]]


def _not_found(
    kind: str, name: str, known: Iterable[str], where: str = ""
) -> tuple[str, list[str]]:
    """``"Step not found: 'x' in workflow 'w' (did you mean 'y'?)"`` and the suggestions."""
    suggestions = closest(name, known)
    message = f"{kind} not found: {name!r}{where}"
    if suggestions:
        message += f" (did you mean {', '.join(map(repr, suggestions))}?)"
    return message, suggestions


class EngineError(Exception):
    """Base of every anticipated failure; ``code``, ``message`` and ``data`` go on the wire."""

    code: int = -32000
    title: str = "Server error"

    def __init__(self, message: str | None = None, **data: Any) -> None:
        self.message = message or self.title
        self.data = {k: v for k, v in data.items() if v is not None}
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "data": self.data}


class InvalidParams(EngineError):
    code = -32602
    title = "Invalid params"


class WorkflowNotFound(EngineError):
    code = -32001
    title = "Workflow not found"

    def __init__(self, workflow_id: str, known: Iterable[str] = ()) -> None:
        message, suggestions = _not_found("Workflow", workflow_id, known)
        super().__init__(message, workflowId=workflow_id, closest=suggestions)


class InvalidWorkflow(EngineError):
    code = -32002
    title = "Invalid workflow"


class StepNotFound(EngineError):
    code = -32003
    title = "Step not found"

    def __init__(
        self, step_id: str, known: Iterable[str] = (), workflow_id: str | None = None
    ) -> None:
        where = f" in workflow {workflow_id!r}" if workflow_id else ""
        message, suggestions = _not_found("Step", step_id, known, where)
        super().__init__(message, stepId=step_id, workflowId=workflow_id, closest=suggestions)


class InvalidCriteria(EngineError):
    code = -32004
    title = "Validation error"


class InvalidRunState(EngineError):
    code = -32005
    title = "State error"


class StorageError(EngineError):
    code = -32006
    title = "Storage error"


class SecurityViolation(EngineError):
    code = -32007
    title = "Security error"


class RunNotFound(EngineError):
    code = -32008
    title = "Run not found"

    def __init__(
        self,
        run_id: str,
        known: Iterable[str] = (),
        *,
        workflow_id: str | None = None,
        action: str | None = None,
        runs_of_it: Iterable[str] = (),
    ) -> None:
        """``workflow_id``: the id names a workflow (a common mix-up); ``action`` is the front
        end's words for starting a run of it ("call run_workflow to start one"). ``runs_of_it``:
        the recent runs of the workflow named ``run_id``, if it names one."""
        if workflow_id is None:
            message, suggestions = _not_found("Run", run_id, known)
        else:
            suggestions = list(known)
            message = f"{run_id!r} is a workflow id; run ids look like {RUN_ID_PREFIX}…"
            if action:
                message += f" — {action}"
            if suggestions:
                message += f" (recent runs: {', '.join(map(repr, suggestions))})"
        super().__init__(
            message,
            runId=run_id,
            workflowId=workflow_id,
            closest=suggestions,
            runsOfWorkflow=list(runs_of_it) or None,
        )


RUN_ID_PREFIX = "wf-"  # every run id starts so (the orchestrator spec's "wf-…")
