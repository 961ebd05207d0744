"""Request bodies over HTTP: bounded before anything parses them, and screened like stdio lines.

The SDK's own parser reads ``1e999`` as infinity, which the answer then writes as ``null``, and a
lone surrogate escape as a string no answer can hold; over stdio `line_screen` refuses both with
−32602 before the SDK sees them. `RequestScreen` does the same for each POST body of ``/mcp``,
and hands the SDK an error response in place of a client's response to one of our requests that
cannot be used (`line_screen.failed_response`: the SDK would refuse it with 400 and leave our
request waiting for its whole time-out). The body it reads is already capped (`web.limited`).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from starlette.requests import Request

from workrail_mcp.line_screen import (
    error_response,
    failed_response,
    may_be_unrepresentable,
    unrepresentable,
)
from workrail_mcp.web import HostRules

__all__ = ["RequestScreen"]

_INVALID_PARAMS = -32602


async def _read_body(receive: Any) -> tuple[bytes, deque[Any]]:
    """The whole body (already bounded by `limited`) and the messages to replay to the app."""
    chunks: list[bytes] = []
    replay: deque[Any] = deque()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            replay.append(message)
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    replay.appendleft({"type": "http.request", "body": body, "more_body": False})
    return body, replay


def _parsed(body: bytes) -> dict[str, Any] | None:
    """The body's JSON object, when it may need screening: one that may hold what no answer can
    hold, or may be a response (it names no method); None otherwise, or when it is no object."""
    if b'"method"' in body and not may_be_unrepresentable(body):
        return None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):  # not JSON: the SDK answers it
        return None
    return value if isinstance(value, dict) else None


def _refusal(body: bytes, value: dict[str, Any]) -> tuple[int, bytes] | None:
    """(HTTP status, JSON body) for a body holding what no answer can hold; None to pass it on."""
    problem = unrepresentable(body, value)
    if problem is None:
        return None
    request_id = value.get("id")
    if "method" not in value or not isinstance(request_id, (str, int)) or request_id is True:
        return 202, b""  # a notification or a response: accepted, never answered
    reply = error_response(request_id, _INVALID_PARAMS, "Invalid params", problem)
    # ASCII escapes: an id holding a lone surrogate is echoed as the client sent it
    return 200, json.dumps(reply).encode()


class RequestScreen:
    """ASGI: a POST whose JSON holds an infinite number or a lone surrogate is answered −32602
    under its own id (as on stdio); every other request goes to the app with its body intact.
    A request from a Host or Origin that is not ours goes to the app too, which refuses it."""

    def __init__(self, app: Any, rules: HostRules) -> None:
        self.app = app
        self._rules = rules

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        body, replay = await _read_body(receive)
        value = _parsed(body)
        failed = failed_response(value, body) if value is not None else None
        if failed is not None:  # the SDK gets the error in its place, under the same id
            replay[0] = {
                "type": "http.request",
                "body": json.dumps(failed).encode(),
                "more_body": False,
            }
        refused = _refusal(body, value) if value is not None and failed is None else None
        if refused is not None and await self._ours(scope):
            status, content = refused
            headers = [(b"content-length", str(len(content)).encode())]
            if content:
                headers.append((b"content-type", b"application/json"))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content})
            return None

        async def replayed() -> Any:
            return replay.popleft() if replay else await receive()

        return await self.app(scope, replayed, send)

    async def _ours(self, scope: Any) -> bool:
        return await self._rules.refusal(Request(scope), json_post=True) is None
