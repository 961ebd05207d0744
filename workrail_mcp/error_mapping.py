"""The one mapping from failures to the wire, shared by every path into a tool.

Error policy (design §5):
- an anticipated failure is an engine `EngineError` with a spec code; a direct JSON-RPC call
  (`{"method": "workflow_get"}`) gets it as a JSON-RPC error, a `tools/call` gets it as an
  `isError` result whose text is `{"error": {code, message, data}}` so the model can read it;
- bad arguments are `-32602 Invalid params` with a readable `details`, the same both ways;
- anything else is a bug: it is logged on stderr and answered `-32603 Internal error` with no
  detail (its text may hold paths or data that are not the caller's business).
"""

from __future__ import annotations

import json
from typing import Any

from mcp import MCPError
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from workrail_engine.errors import EngineError

__all__ = [
    "INTERNAL_ERROR",
    "as_json_text",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "describe_validation_error",
    "engine_error_to_mcp",
    "error_payload",
    "error_result",
    "invalid_params",
    "success_result",
]

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603


def error_payload(code: int, message: str, data: Any = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        payload["data"] = data
    return payload


def engine_error_to_mcp(error: EngineError) -> MCPError:
    return MCPError(code=error.code, message=error.message, data=error.data or None)


def invalid_params(details: str, **extra: Any) -> MCPError:
    return MCPError(
        code=INVALID_PARAMS, message="Invalid params", data={"details": details, **extra}
    )


def _field_name(location: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in location) or "params"


def describe_validation_error(error: ValidationError) -> str:
    """Pydantic's errors as one sentence a model can act on ("workflowId is required; ...")."""
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        field = _field_name(tuple(item.get("loc", ())))
        if item.get("type") == "missing":
            parts.append(f"{field} is required")
        else:
            parts.append(f"{field}: {item.get('msg', 'invalid value')}")
    return "; ".join(parts) or "invalid params"


def as_json_text(value: Any) -> str:
    # Compact: for 10,000 workflows the spaces alone were 120 KB on every answer.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def success_result(result: dict[str, Any], text: str | None = None) -> CallToolResult:
    """`structuredContent` plus the same JSON as text, for clients that read only text."""
    body = text if text is not None else as_json_text(result)
    return CallToolResult(content=[TextContent(type="text", text=body)], structured_content=result)


def error_result(code: int, message: str, data: Any = None) -> CallToolResult:
    """An `isError` result. No `structuredContent`: it would have to match the success schema."""
    body = {"error": error_payload(code, message, data)}
    return CallToolResult(
        content=[TextContent(type="text", text=as_json_text(body))], is_error=True
    )
