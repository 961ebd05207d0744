"""Errors in upstream WorkRail 3.x's shape, for the ``--tools upstream`` edition.

Observed from upstream v3.121.0 (tests/fixtures/upstream_sessions/): a failed tool call is an
``isError`` result whose JSON is ``{code, message, retry {kind}, details}`` with string codes
(TOKEN_BAD_SIGNATURE, NOT_FOUND, ...). An agent written for upstream reads ``code``; ours also
carry our own ``error {code, message, data}`` envelope with the numeric code every tool uses.
"""

from __future__ import annotations

from mcp_types import CallToolResult, TextContent

from workrail_engine.errors import EngineError
from workrail_mcp.error_mapping import as_json_text, error_payload

__all__ = ["upstream_error"]


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


def upstream_error(error: EngineError) -> CallToolResult:
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
