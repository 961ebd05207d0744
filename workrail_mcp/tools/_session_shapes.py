"""Session results and errors in upstream WorkRail 3.x's JSON shapes.

The shapes are facts observed from upstream v3.121.0 (tests/fixtures/upstream_sessions/): a
step is ``{kind, continueToken, checkpointToken, isComplete, pending, preferences, nextIntent,
nextCall}``, a blocked advance adds ``blockers.blockers[]`` and ``retryContinueToken``, and an
error is ``{code, message, retry, details}`` with string codes. Every session tool answers in
them in both editions, so an agent written for upstream reads ours unchanged. Errors also carry
our own ``error {code, message, data}`` envelope (the numeric codes of every other tool).
"""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent

from workrail_engine.errors import EngineError
from workrail_engine.sessions import SessionStep
from workrail_mcp.error_mapping import as_json_text, error_payload

__all__ = ["session_error", "step_response"]

CONTINUE_TOOL = "continue_workflow"
# Upstream reports the user's preferences with every step; we keep none, so its defaults.
PREFERENCES = {"autonomy": "guided", "riskPolicy": "conservative"}

# Our problem kinds (`step_checks`) as upstream's blocker codes.
_BLOCKER_CODES = {
    "notes": "MISSING_REQUIRED_NOTES",
    "criteria": "VALIDATION_CRITERIA_FAILED",
    "artifacts": "MISSING_REQUIRED_ARTIFACT",
    "followup": "ASSESSMENT_FOLLOWUP_REQUIRED",
}
_FIXES = {
    "notes": "send output.notesMarkdown: what you did, decided and produced, in markdown",
    "criteria": "change the notes so that they meet the step's validation criteria",
    "artifacts": "send the artifact the step asks for in output.artifacts",
    "followup": "do the follow-up the assessment asks for, then send the answer again",
}


def _intent(step: SessionStep) -> str:
    if step.is_complete:
        return "complete"
    if step.outcome == "current":
        return "rehydrate_only"
    return (
        "await_user_confirmation" if step.requires_confirmation else "perform_pending_then_continue"
    )


def _blockers(step: SessionStep, step_id: str) -> list[dict[str, Any]]:
    return [
        {
            "code": _BLOCKER_CODES.get(problem.get("kind", ""), "VALIDATION_ERROR"),
            "pointer": {"kind": "workflow_step", "stepId": step_id},
            "message": problem["message"],
            "suggestedFix": _FIXES.get(problem.get("kind", ""), "send a corrected answer"),
        }
        for problem in step.problems
    ]


def step_response(step: SessionStep, *, with_kind: bool = True) -> dict[str, Any]:
    """A session step as upstream answers ``start_workflow`` (``with_kind=False``) and
    ``continue_workflow``. Deterministic in the step: a replay shapes to the same JSON."""
    head: dict[str, Any] = {"kind": "blocked" if step.outcome == "blocked" else "ok"}
    if not with_kind:
        head = {}
    if step.is_complete:
        return {
            **head,
            "isComplete": True,
            "pending": None,
            "preferences": PREFERENCES,
            "nextIntent": "complete",
            "nextCall": None,
        }
    pending = step.pending or {}
    body = {
        **head,
        "continueToken": step.continue_token,
        "checkpointToken": step.checkpoint_token,
        "isComplete": False,
        "pending": pending,
        "preferences": PREFERENCES,
        "nextIntent": _intent(step),
        "nextCall": {"tool": CONTINUE_TOOL, "params": {"continueToken": step.continue_token}},
    }
    if step.outcome == "blocked":
        # The same continue token retries a blocked step (the answer was not recorded).
        body["blockers"] = {"blockers": _blockers(step, pending.get("stepId", ""))}
        body["retryable"] = True
        body["retryContinueToken"] = step.continue_token
    return body


# Our engine codes in upstream's vocabulary, where no ``data.reason`` says more.
_UPSTREAM_CODES = {
    -32001: "NOT_FOUND",  # workflow
    -32008: "NOT_FOUND",  # session (run)
    -32602: "VALIDATION_ERROR",
    -32002: "PRECONDITION_FAILED",  # invalid workflow file
    -32005: "PRECONDITION_FAILED",  # the session's state does not allow it
}
_SUGGESTIONS = {
    "TOKEN_INVALID_FORMAT": "pass the token exactly as a session tool returned it",
    "TOKEN_BAD_SIGNATURE": "pass the token exactly as received, or find the session again "
    "with resume_session",
    "TOKEN_SCOPE_MISMATCH": "re-read with the resume token (intent rehydrate), then advance "
    "with the continueToken that returns",
    "ANSWER_NOT_APPLIED": "continue from details.state: its pending step and continueToken",
    "NOT_FOUND": "list_workflows shows the workflows; resume_session finds sessions",
}


def session_error(error: EngineError) -> CallToolResult:
    """An `isError` result readable by an agent written for upstream and by ours."""
    data = dict(error.data or {})
    reason = data.get("reason")
    code = reason if isinstance(reason, str) and reason.startswith("TOKEN_") else None
    if code is None and reason == "ANSWER_NOT_APPLIED":
        code = "PRECONDITION_FAILED"
    code = code or _UPSTREAM_CODES.get(error.code, "INTERNAL_ERROR")
    details = {k: v for k, v in data.items() if k != "reason"}
    if reason:
        details["reason"] = reason
    suggestion = _SUGGESTIONS.get(str(reason)) or _SUGGESTIONS.get(code)
    if suggestion:
        details["suggestion"] = suggestion
    body = {
        "code": code,
        "message": error.message,
        "retry": {"kind": "not_retryable"},
        "details": details,
        "error": error_payload(error.code, error.message, error.data or None),
    }
    return CallToolResult(
        content=[TextContent(type="text", text=as_json_text(body))], is_error=True
    )
