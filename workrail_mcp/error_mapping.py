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


_JSON_TYPES = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
    type(None): "null",
}
# pydantic's error types, in words a model can act on ("must be an integer, got a string").
_EXPECTED = {
    "missing": "is required",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be a string",
    "dict_type": "must be an object",
    "list_type": "must be an array",
    "literal_error": "must be one of {expected}",
    "string_pattern_mismatch": "must match the pattern {pattern}",
    "string_too_short": "must have at least {min_length} characters",
    "string_too_long": "must have at most {max_length} characters",
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be greater than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "too_short": "must have at least {min_length} items",
    "too_long": "must have at most {max_length} items",
}


def _field_name(location: tuple[Any, ...]) -> str:
    # A union's member names ("str", "function-after[...]") are pydantic's, not the caller's.
    parts = [str(part) for part in location if not _is_validator_tag(part)]
    return ".".join(parts) or "params"


def _is_validator_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        part in ("str", "int", "float", "bool", "dict[str,any]", "list[str]", "none") or "[" in part
    )


def _in_words(item: Any) -> str:
    field = _field_name(tuple(item.get("loc", ())))
    kind = item.get("type", "")
    template = _EXPECTED.get(kind)
    if template is None:
        return f"{field}: {str(item.get('msg', 'invalid value')).lower()}"
    try:
        limits = {
            key: int(value) if isinstance(value, float) and value.is_integer() else value
            for key, value in (item.get("ctx") or {}).items()
        }
        expected = template.format(**limits)
    except (KeyError, IndexError):
        expected = template
    text = f"{field} {expected}"
    if kind.endswith(("_type", "_parsing")) and "input" in item:
        text += f" (got {_JSON_TYPES.get(type(item['input']), 'a value')})"
    return text


def describe_validation_error(error: ValidationError) -> str:
    """Pydantic's errors as one sentence a model can act on ("workflowId is required; ...")."""
    parts = list(dict.fromkeys(_in_words(item) for item in error.errors(include_url=False)))
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
