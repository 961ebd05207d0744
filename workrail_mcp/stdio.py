"""stdio transport: newline-delimited JSON-RPC with every line answered.

The SDK's own stdio transport drops lines it cannot parse; this one screens each line first
(`line_screen`), answers what the SDK would not, and hands the rest to the SDK's dual-era loop.
Protocol goes to the real stdout through a private descriptor; fd 1 is pointed at stderr (and
fd 0 at /dev/null) while serving, so a stray print or a child process cannot corrupt the wire.
The bytes themselves are read and written on the event loop when the wire is a pipe or socket
(`wire_io`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any, BinaryIO

import anyio
import mcp_types
from mcp.server import MCPServer
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from workrail_mcp.known_json import KnownJson
from workrail_mcp.line_screen import Screened, error_response, is_response, screen_line
from workrail_mcp.protocol import ProtocolMiddleware
from workrail_mcp.wire_io import MAX_LINE_BYTES, TOO_LONG, LineReader, WireWriter

__all__ = ["MAX_LINE_BYTES", "serve_stdio"]

logger = logging.getLogger(__name__)

# How long `shutdown` or end of input waits for the requests in flight. A first call that opens
# the run store imports DBOS (≈ 1 s of CPU): on a loaded machine that took more than 5 s, and the
# request was dropped unanswered. Only a tool that is truly stuck waits the whole grace.
_SHUTDOWN_GRACE_SECONDS = 30.0


def _claim_std_streams() -> tuple[BinaryIO, BinaryIO]:
    """Private duplicates of fd 0/1 for the protocol; fd 0 → /dev/null, fd 1 → stderr."""
    wire_in = os.fdopen(os.dup(0), "rb", buffering=0)
    wire_out = os.fdopen(os.dup(1), "wb", buffering=0)
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return wire_in, wire_out


class _InFlight:
    """Ids of requests handed to the SDK and not answered yet (end of input waits for them)."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.idle = anyio.Event()
        self.idle.set()

    def started(self, request_id: Any) -> None:
        self.ids[request_id] = self.ids.get(request_id, 0) + 1
        self.idle = anyio.Event() if self.idle.is_set() else self.idle

    def answered(self, request_id: Any) -> None:
        count = self.ids.pop(request_id, 0) - 1
        if count > 0:
            self.ids[request_id] = count
        if not self.ids:
            self.idle.set()


class _Writer:
    """JSON-RPC messages as lines on the wire."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.wire = WireWriter(stream)

    async def write(self, message: dict[str, Any] | str | bytes) -> None:
        if isinstance(message, dict):
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
            try:
                line = text.encode("utf-8")
            except UnicodeEncodeError:  # an id echoed with a lone surrogate: written as its escape
                line = json.dumps(message, separators=(",", ":")).encode("ascii")
        else:
            line = message if isinstance(message, bytes) else message.encode("utf-8")
        await self.wire.write_line(line)


def _to_session_message(message: dict[str, Any]) -> SessionMessage | dict[str, Any] | None:
    """The SDK's message, an error response when its model rejects the line, or None for a
    rejected response (a response is never answered, JSON-RPC says)."""
    try:
        return SessionMessage(
            mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
        )
    except ValidationError:
        if is_response(message):
            logger.warning("ignored a malformed response to request %r", message.get("id"))
            return None
        request_id = message.get("id")
        return error_response(request_id, -32600, "Invalid Request", "not a valid JSON-RPC message")


async def _pump_input(
    reader: LineReader, to_sdk: Any, writer: _Writer, in_flight: _InFlight
) -> Screened | None:
    """Feeds the SDK until end of input (None) or a `shutdown` request (returned).

    Before the SDK's input is closed, the requests it is still working on are answered: it
    would otherwise cancel them silently, and a client that sent `shutdown` after a request
    expects that request's answer first.
    """
    try:
        return await _feed(reader, to_sdk, writer, in_flight)
    finally:
        with anyio.move_on_after(_SHUTDOWN_GRACE_SECONDS, shield=True):
            await in_flight.idle.wait()
        await to_sdk.aclose()


def _track(message: dict[str, Any], in_flight: _InFlight) -> None:
    if "id" in message and "method" in message:
        in_flight.started(message["id"])
    elif message.get("method") == "notifications/cancelled":
        # A cancelled request is never answered; stop waiting for it.
        in_flight.answered((message.get("params") or {}).get("requestId"))


async def _feed(
    reader: LineReader, to_sdk: Any, writer: _Writer, in_flight: _InFlight
) -> Screened | None:
    while True:
        line = await reader.read_line()
        if line is None:
            return None
        if line is TOO_LONG:
            await writer.write(
                error_response(
                    None, -32600, "Invalid Request", f"message longer than {MAX_LINE_BYTES} bytes"
                )
            )
            continue
        screened = screen_line(line)
        if screened.is_shutdown:
            return screened
        if screened.reply is not None:
            await writer.write(screened.reply)
        elif screened.message is not None:
            converted = _to_session_message(screened.message)
            if converted is None:
                continue
            if isinstance(converted, dict):
                await writer.write(converted)
            else:
                _track(screened.message, in_flight)
                await to_sdk.send(converted)


def _encode(message: Any, known: KnownJson | None) -> bytes | str:
    """The wire line; a result whose parts are already known as JSON is not serialized again."""
    if known is not None and isinstance(message, mcp_types.JSONRPCResponse):
        line = known.response_line(message.id, message.result)
        if line is not None:
            return line
    return message.model_dump_json(by_alias=True, exclude_unset=True)


def _enable_known_json(server: MCPServer) -> KnownJson | None:
    """Our tools' shared results, remembered as JSON from now on (only this transport reads them)."""
    for layer in server.middleware:
        if isinstance(layer, ProtocolMiddleware):
            layer.registry.known.enabled = True
            return layer.registry.known
    return None


async def _pump_output(
    from_sdk: Any, writer: _Writer, in_flight: _InFlight, done: anyio.Event, known: KnownJson | None
) -> None:
    try:
        async with from_sdk:
            async for session_message in from_sdk:
                message = session_message.message
                is_answer = isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError)
                try:
                    line = _encode(message, known)
                except Exception:  # noqa: BLE001 - one unserializable message must not end the server
                    logger.exception("a message could not be serialized; not sent")
                    if not is_answer:
                        continue
                    line = json.dumps(
                        error_response(
                            message.id,
                            -32603,
                            "Internal error",
                            "the result could not be serialized",
                        )
                    )
                await writer.write(line)
                if is_answer:
                    in_flight.answered(message.id)
    finally:
        done.set()


async def serve_stdio(
    server: MCPServer, *, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> int:
    """Serve until end of input or `shutdown` (answered null after the SDK has finished); 0."""
    if stdin is None or stdout is None:
        stdin, stdout = _claim_std_streams()
    reader, writer = LineReader(stdin), _Writer(stdout)
    lowlevel = server._lowlevel_server  # the SDK offers no public way to serve our own streams
    to_sdk, sdk_in = anyio.create_memory_object_stream[SessionMessage | Exception](64)
    sdk_out, from_sdk = anyio.create_memory_object_stream[SessionMessage](64)
    output_done, in_flight = anyio.Event(), _InFlight()
    async with anyio.create_task_group() as group:
        group.start_soon(
            _pump_output, from_sdk, writer, in_flight, output_done, _enable_known_json(server)
        )
        group.start_soon(lowlevel.run, sdk_in, sdk_out, lowlevel.create_initialization_options())
        shutdown = await _pump_input(reader, to_sdk, writer, in_flight)
        # End of the SDK's input: it answers what is in flight, closes its output, and we drain it.
        with anyio.move_on_after(_SHUTDOWN_GRACE_SECONDS):
            await output_done.wait()
        group.cancel_scope.cancel()
    if shutdown is not None:
        await writer.write({"jsonrpc": "2.0", "id": shutdown.shutdown_id, "result": None})
    return 0
