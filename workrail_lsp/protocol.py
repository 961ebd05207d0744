"""The JSON-RPC protocol, answering requests whose params the protocol's types cannot hold.

pygls turns a request it cannot structure (``line: -1``, ``2^31``, a position that is a string)
into an exception inside its read loop, which logs it and drops the request: the client waits
forever for an answer. Here such a request is answered −32602 (Invalid params) under its own
id, with what was wrong; a notification still gets no answer, as JSON-RPC says.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import cattrs
from cattrs.v import format_exception
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

from . import tracing

__all__ = ["AnsweringProtocol"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Refused:
    """A request that could not be structured, waiting for its error response."""

    id: int | str
    error: ResponseError


def _reason(exc: BaseException, type_: type | None) -> str:
    # lsprotocol's range validators say which bound was crossed; cattrs's default says only
    # "invalid value".
    if isinstance(exc, ValueError) and not isinstance(exc, cattrs.BaseValidationError):
        return str(exc)
    return format_exception(exc, type_)


def _details(error: JsonRpcException) -> str:
    cause = error.__cause__
    if isinstance(cause, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(cause, format_exception=_reason))
    return str(cause or error)


def _is_request(data: dict[str, Any]) -> bool:
    request_id = data.get("id")
    valid_id = isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )
    return valid_id and isinstance(data.get("method"), str)


class AnsweringProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams as error:
            if not _is_request(data):
                raise
            details = _details(error)
            log.warning("%s request %r: invalid params: %s", data["method"], data["id"], details)
            return _Refused(
                data["id"],
                ResponseError(code=error.code, message=f"Invalid params: {details}"),
            )

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Refused):
            self._send_response(message.id, error=message.error)
            return
        self._observed("handle", message, super().handle_message)

    def _send_data(self, data: Any) -> None:
        self._observed("send", data, super()._send_data)

    def _observed(self, span: str, message: Any, call: Any) -> None:
        """``call(message)``: a message read or written postpones the idle work (idle_work), and
        is a span when tracing is on."""
        self._server.idle.activity()
        if not tracing.enabled():
            call(message)
            return
        with tracing.span(
            span, method=getattr(message, "method", None), id=getattr(message, "id", None)
        ):
            call(message)
