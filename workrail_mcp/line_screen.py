"""Screening of each line read from stdio, before the SDK sees it.

The SDK silently drops a line that is not JSON, and a JSON array; a JSON-RPC server answers
them. Each line becomes exactly one of: a message for the SDK, an error response for us to
write, a ``shutdown`` request, or nothing (a blank line, a malformed notification, or a
malformed response without an id of ours: JSON-RPC says neither is ever answered).

A response to one of our requests (an id we could have sent) that cannot be used — its result no
object, its error malformed, a lone surrogate or an infinite number in it — would be dropped by
the SDK and leave our request waiting for its whole time-out; it goes on as an error response
under the same id instead (`failed_response`), which ends the wait at once.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Screened",
    "error_response",
    "failed_response",
    "is_response",
    "may_be_unrepresentable",
    "screen_line",
    "unrepresentable",
]

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


# A \uD800–\uDFFF escape: JSON text may hold one, but alone (not as half of a pair) it is no
# Unicode character, and no answer that echoes it could be written as UTF-8.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


# A number like 1e999 is read as infinity, which no JSON answer can hold (it would come back as
# null); found by its exponent before anything walks the value.
_BIG_EXPONENT = re.compile(rb"[eE][+]?0*[1-9][0-9]{2,}")


def may_be_unrepresentable(text: bytes) -> bool:
    """Whether JSON ``text`` could hold what `unrepresentable` refuses (a scan, no parse)."""
    return bool(_SURROGATE_ESCAPE.search(text) or _BIG_EXPONENT.search(text))


def unrepresentable(line: bytes, value: Any) -> str | None:
    """Why ``value`` cannot be taken as it stands, for text that parsed as JSON: None if it can.

    Shared by both transports: stdio screens each line, HTTP each request body.
    """
    if _SURROGATE_ESCAPE.search(line) and _has_lone_surrogate(value):
        return "a string holds a lone surrogate escape (\\uD800–\\uDFFF), which is not Unicode text"
    if _BIG_EXPONENT.search(line) and _has_infinity(value):
        return "a number is too large to be represented (it would be infinity)"
    return None


def _has_infinity(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and math.isinf(item):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except RecursionError:  # too deep to check here; the nesting limit refuses it later
        return False
    return False


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _parse(line: bytes) -> tuple[Any, str | None]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"the line is not UTF-8 (byte {error.start})"
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        return None, f"{error.msg} at column {error.colno}"
    except RecursionError:
        return None, "the JSON is nested too deeply"
    except ValueError as error:
        return None, str(error)
    return value, None


def is_response(obj: dict[str, Any]) -> bool:
    """A client's answer to one of our requests: no method, and a `result` or an `error`."""
    return "method" not in obj and ("result" in obj or "error" in obj)


def _unusable(obj: dict[str, Any]) -> str | None:
    """Why a response cannot be used as the answer to our request (None: it can)."""
    if obj.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if ("result" in obj) == ("error" in obj):
        return "a response holds a result or an error, not both"
    if "result" in obj and not isinstance(obj["result"], dict):
        return f"the result is {type(obj['result']).__name__}, not an object"
    error = obj.get("error", {})
    code = error.get("code") if isinstance(error, dict) else None
    if "error" in obj and not (
        isinstance(code, int)
        and not isinstance(code, bool)
        and isinstance(error.get("message"), str)
    ):
        return "the error is not an object with an integer code and a message"
    return None


def failed_response(obj: dict[str, Any], text: bytes) -> dict[str, Any] | None:
    """The error response that stands for the client's unusable response ``obj`` (parsed from
    ``text``) to a request of ours, so the request fails at once; None when ``obj`` is usable or
    answers no id we could have sent."""
    if not is_response(obj) or not _valid_id(obj.get("id")):
        return None
    problem = unrepresentable(text, obj) or _unusable(obj)
    if problem is None:
        return None
    return error_response(
        obj["id"], _INVALID_REQUEST, "the client's response could not be used", problem
    )


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
    failed = failed_response(value, line)
    if failed is not None:
        return Screened(message=failed)
    problem = unrepresentable(line, value)
    if problem is not None:
        if is_response(value) or "id" not in value:
            return Screened()  # neither a response nor a notification is ever answered
        request_id = value["id"] if _valid_id(value["id"]) else None
        # Our own replies are written with ASCII escapes, so even an id holding a lone surrogate
        # is echoed as the client sent it.
        return Screened(
            reply=error_response(request_id, _INVALID_PARAMS, "Invalid params", problem)
        )
    return _screen_object(value)
