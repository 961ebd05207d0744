"""The listening socket and how uvicorn serves it: bound here (one readable line when the port
cannot be had), with a total deadline on each request's headers and body."""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import Any

import anyio
import anyio.abc
import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from workrail_mcp.web.options import BODY_TIMEOUT_SECONDS, HEADER_TIMEOUT_SECONDS

__all__ = [
    "LOCAL_HOSTS",
    "ListenError",
    "RequestDeadlineProtocol",
    "bind_listener",
    "host_port",
    "start_serving",
]

# The names of this machine: a server bound to one of them is reachable from nowhere else.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


class ListenError(Exception):
    """The HTTP port cannot be opened; the message is one line for a person."""


def host_port(host: str, port: int) -> str:
    """``host:port`` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, bound here rather than by uvicorn.

    uvicorn reports a bind failure by logging it and calling ``sys.exit(3)`` inside our task
    group, which surfaces as an exception-group traceback; binding first turns each failure into
    a `ListenError` with one readable line, and tells us the real port when ``port`` is 0.

    The socket says it is TCP (``proto``): `socket.create_server` leaves it 0, and asyncio turns
    on TCP_NODELAY only for the accepted connections of a socket that says so. Without it, a
    response written in two parts (headers, then body) waited for the client's delayed ACK of
    the first: about 40 ms on every request of a kept-alive connection.
    """
    try:
        family, _, _, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise ListenError(f"cannot listen on {host!r}: {error.strerror}") from None
    try:
        listener = socket.create_server(address, family=family)
    except OSError as error:
        where = host_port(host, port)
        if error.errno == errno.EADDRINUSE:
            raise ListenError(
                f"{where} is already in use; pass --port N (0 picks a free port)"
            ) from None
        if error.errno == errno.EACCES:
            raise ListenError(
                f"no permission to listen on {where}; pass --port N above 1023 (0 picks a free port)"
            ) from None
        raise ListenError(f"cannot listen on {where}: {error.strerror}") from None
    return socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=listener.detach())


class RequestDeadlineProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with deadlines for receiving each request.

    uvicorn times out only an idle kept-alive connection, and any byte received cancels that
    timer: a client that opens a connection and sends nothing, trickles a header a byte at a time
    (slowloris) or a body likewise, holds the connection forever. Here each phase has a total
    deadline, however the bytes arrive: a request's headers `HEADER_TIMEOUT_SECONDS` from the
    moment the server waits for them, its body `BODY_TIMEOUT_SECONDS` from its headers; past it
    the connection is closed. `with_deadlines` makes the class of other figures
    (``--header-timeout``, ``--body-timeout``).
    """

    header_seconds = HEADER_TIMEOUT_SECONDS
    body_seconds = BODY_TIMEOUT_SECONDS
    _deadline: asyncio.TimerHandle | None = None
    _deadline_phase: object = None  # the h11 state of the client the deadline is for

    def _watch(self) -> None:
        """Arm the deadline of what the client is sending now (or none once it has sent it)."""
        phase = self.conn.their_state
        if phase is self._deadline_phase:
            return  # the same phase: its deadline stands, whatever bytes arrived meanwhile
        self._cancel_deadline()
        seconds = {h11.IDLE: self.header_seconds, h11.SEND_BODY: self.body_seconds}.get(phase)
        if seconds is not None and not self.transport.is_closing():
            self._deadline_phase = phase
            self._deadline = self.loop.call_later(seconds, self._deadline_passed, phase)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._deadline_phase = None, None

    def _deadline_passed(self, phase: object) -> None:
        self._deadline, self._deadline_phase = None, None
        if self.conn.their_state is phase and not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()  # the next request on a kept-alive connection

    @classmethod
    def with_deadlines(
        cls, header_seconds: float, body_seconds: float
    ) -> type[RequestDeadlineProtocol]:
        """The protocol with these deadlines: uvicorn makes each connection's from a class."""
        return type(
            cls.__name__,
            (cls,),
            {"header_seconds": header_seconds, "body_seconds": body_seconds},
        )


async def start_serving(
    group: anyio.abc.TaskGroup,
    app: Any,
    listener: socket.socket,
    *,
    lifespan: str,
    header_timeout: float = HEADER_TIMEOUT_SECONDS,
    body_timeout: float = BODY_TIMEOUT_SECONDS,
) -> bool:
    """Serve ``app`` on ``listener`` with uvicorn (and the request deadlines) in ``group``, once
    it is listening; False when uvicorn stopped before it could serve."""
    import uvicorn

    protocol = RequestDeadlineProtocol.with_deadlines(header_timeout, body_timeout)
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan, http=protocol))
    group.start_soon(web.serve, [listener])
    while not web.started:
        if web.should_exit:
            return False
        await anyio.sleep(0.02)
    return True
