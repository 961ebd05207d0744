"""Screening of each line read from stdio, before the SDK sees it.

The SDK silently drops a line that is not JSON, and a JSON array; a JSON-RPC server answers
them. Each line becomes exactly one of: a message for the SDK, an error response for us to
write, a ``shutdown`` request, or nothing (a blank line, a malformed notification, or a
malformed response: JSON-RPC says neither is ever answered).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Screened", "error_response", "is_response", "screen_line"]

_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600
_INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Screened:
    message: dict[str, Any] | None = None  # pass on to the SDK
    reply: dict[str, Any] | None = None  # answer it ourselves
    shutdown_id: Any = None  # a `shutdown` request's id (answered null, then we exit)
    is_shutdown: bool = False


def error_response(request_id: Any, code: int, message: str, details: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": message, "data": {"details": details}},
    }


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _parse(line: bytes) -> tuple[Any, str | None]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"the line is not UTF-8 (byte {error.start})"
    try:
        return json.loads(text, parse_constant=_reject_constant), None
    except json.JSONDecodeError as error:
        return None, f"{error.msg} at column {error.colno}"
    except RecursionError:
        return None, "the JSON is nested too deeply"
    except ValueError as error:
        return None, str(error)


def is_response(obj: dict[str, Any]) -> bool:
    """A client's answer to one of our requests: no method, and a `result` or an `error`."""
    return "method" not in obj and ("result" in obj or "error" in obj)


def _screen_response(obj: dict[str, Any]) -> Screened:
    well_formed = (
        obj.get("jsonrpc") == "2.0"
        and ("result" in obj) != ("error" in obj)
        and "id" in obj
        and (_valid_id(obj["id"]) or ("error" in obj and obj["id"] is None))
    )
    return Screened(message=obj) if well_formed else Screened()


def _screen_object(obj: dict[str, Any]) -> Screened:
    if is_response(obj):
        return _screen_response(obj)
    has_id = "id" in obj
    request_id = obj.get("id") if has_id and _valid_id(obj.get("id")) else None

    def invalid(details: str) -> Screened:
        return Screened(
            reply=error_response(request_id, _INVALID_REQUEST, "Invalid Request", details)
        )

    if has_id and not _valid_id(obj["id"]):
        return invalid("id must be a string or an integer")
    if obj.get("jsonrpc") != "2.0":
        return invalid('jsonrpc must be "2.0"')
    if "method" not in obj:
        return invalid("a request needs a method")
    if not isinstance(obj["method"], str):
        return invalid("method must be a string")
    params = obj.get("params")
    if params is None:
        obj = {k: v for k, v in obj.items() if k != "params"}
    elif not isinstance(params, dict):
        if not has_id:
            return Screened()  # a malformed notification is not answered
        if isinstance(params, list):
            return Screened(
                reply=error_response(
                    request_id,
                    _INVALID_PARAMS,
                    "Invalid params",
                    "params must be an object (by-name arguments)",
                )
            )
        return invalid("params must be an object")
    if has_id and obj["method"] == "shutdown":
        return Screened(shutdown_id=request_id, is_shutdown=True)
    return Screened(message=obj)


def screen_line(line: bytes) -> Screened:
    if not line.strip():
        return Screened()
    value, problem = _parse(line)
    if problem is not None:
        return Screened(reply=error_response(None, _PARSE_ERROR, "Parse error", problem))
    if isinstance(value, list):
        return Screened(
            reply=error_response(
                None, _INVALID_REQUEST, "Invalid Request", "batches (JSON arrays) are not supported"
            )
        )
    if not isinstance(value, dict):
        return Screened(
            reply=error_response(
                None, _INVALID_REQUEST, "Invalid Request", "a request must be a JSON object"
            )
        )
    return _screen_object(value)
