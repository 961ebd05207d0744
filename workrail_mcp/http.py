"""Streamable HTTP transport: the SDK's app behind a bearer-token check, with a start banner."""

from __future__ import annotations

import asyncio
import errno
import hmac
import os
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import anyio
import anyio.abc
import h11
from mcp.server import MCPServer
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from uvicorn.protocols.http.h11_impl import H11Protocol

from workrail_mcp.command_options import BODY_TIMEOUT_SECONDS, HEADER_TIMEOUT_SECONDS
from workrail_mcp.http_screen import RequestScreen, limited
from workrail_mcp.http_sessions import MAX_SESSIONS, SESSION_IDLE_SECONDS, SessionAdmission
from workrail_mcp.server import SERVER_NAME

__all__ = [
    "BODY_TIMEOUT_SECONDS",
    "HEADER_TIMEOUT_SECONDS",
    "TOKEN_ENV",
    "RequestDeadlineProtocol",
    "BearerTokenGate",
    "ListenError",
    "PathDispatch",
    "bearer_authorized",
    "bind_listener",
    "build_http_app",
    "serve_http",
]

TOKEN_ENV = "WORKRAIL_HTTP_TOKEN"
MCP_PATH = "/mcp"
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


class ListenError(Exception):
    """The HTTP port cannot be opened; the message is one line for a person."""


def _host_port(host: str, port: int) -> str:
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
        where = _host_port(host, port)
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


def bearer_authorized(header: bytes, token: bytes) -> bool:
    """Whether an ``Authorization`` header carries ``token`` (the dashboard asks the same)."""
    scheme, _, credentials = header.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.lstrip(b" "), token)


class BearerTokenGate:
    """ASGI middleware: without ``Authorization: Bearer <token>``, 401 and nothing else.

    The scheme is matched case-insensitively (RFC 9110 §11.1), the token exactly and in
    constant time.
    """

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    def _authorized(self, header: bytes) -> bool:
        return bearer_authorized(header, self.expected)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self._authorized(
            dict(scope.get("headers") or ()).get(b"authorization", b"")
        ):
            await self.app(scope, receive, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"www-authenticate", b'Bearer realm="workrail"'),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def _security(
    host: str, port: int, extra_hosts: Sequence[str], extra_origins: Sequence[str]
) -> TransportSecuritySettings:
    """DNS-rebinding protection on every bind: only the names we listen as are accepted.

    A browser's Origin must be this server's own (scheme, host and port): a page served by
    another local port is another site. The SDK compares Origin strings exactly, so each
    accepted spelling is listed; a browser leaves out the port when it is 80.
    """
    names = ["127.0.0.1", "localhost", "[::1]"]
    if host not in _LOCAL_HOSTS:
        names.append(f"[{host}]" if ":" in host else host)
    names.extend(extra_hosts)
    ports = [f":{port}", ""] if port == 80 else [f":{port}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}{p}" for name in names for p in ports]
        + [origin.rstrip("/") for origin in extra_origins],
    )


class PathDispatch:
    """ASGI: ``/mcp`` (and the lifespan, which the SDK's session manager needs) to the MCP app,
    every other path to the dashboard."""

    def __init__(self, mcp: Any, dashboard: Any) -> None:
        self.mcp = mcp
        self.dashboard = dashboard

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path == MCP_PATH or path.startswith(MCP_PATH + "/"):
            return await self.mcp(scope, receive, send)
        return await self.dashboard(scope, receive, send)


DashboardFactory = Callable[[TransportSecuritySettings, "str | None"], Any]


def build_http_app(
    server: MCPServer,
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    dashboard: DashboardFactory | None = None,
) -> Any:
    """The MCP app at ``/mcp``; with ``dashboard`` (called with the same Host/Origin rules and
    token), the dashboard at every other path."""
    security = _security(host, port, allowed_hosts, allowed_origins)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=security,
        session_idle_timeout=SESSION_IDLE_SECONDS,
        # a backstop only: SessionAdmission keeps to MAX_SESSIONS and makes room by eviction
        max_sessions=2 * MAX_SESSIONS,
    )
    # bounded here too: the screen reads the body before the SDK's own cap would
    app = SessionAdmission(
        limited(RequestScreen(app, security), DEFAULT_MAX_REQUEST_BODY_SIZE), MCP_PATH
    )
    mcp = BearerTokenGate(app, token) if token else app
    return mcp if dashboard is None else PathDispatch(mcp, dashboard(security, token))


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


def _banner(
    url: str,
    catalog: Any,
    token: bool,
    out: TextIO,
    exposed: bool = False,
    dashboard_url: str | None = None,
) -> None:
    workflows, invalid = len(catalog.entries()), len(catalog.invalid_files())
    lines = [
        f"WorkRail MCP server listening on {url} (clients see it as {SERVER_NAME!r}, "
        "the server name of the WorkRail API spec)"
    ]
    if dashboard_url:
        lines.append(f"Dashboard (runs and workflows in a browser): {dashboard_url}")
    line = f"Loaded {workflows} workflow{'s' if workflows != 1 else ''}"
    if invalid:
        line += (
            f"; {invalid} invalid file{'s' if invalid != 1 else ''} left out "
            "(see `workrail validate`)"
        )
    interval = getattr(catalog, "rescan_interval", None)
    if interval is not None:
        line += f"; workflow files are re-scanned every {interval:g} s"
    lines.append(line)
    header = f' --header "Authorization: Bearer ${TOKEN_ENV}"' if token else ""
    lines.append(f"Connect Claude Code:  claude mcp add --transport http workrail {url}{header}")
    lines.append(
        f"Or try it:            npx @modelcontextprotocol/inspector --cli {url} --transport http{header} --method tools/list"
    )
    if token:
        lines.append(f"Clients must send the bearer token from {TOKEN_ENV}.")
    elif exposed:
        lines.append(
            f"Warning: listening beyond this machine without {TOKEN_ENV}; anyone who can reach the port can use it."
        )
    lines.append("Press Ctrl+C to stop.")
    print("\n".join(lines), file=out, flush=True)


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


async def serve_http(
    server: MCPServer,
    catalog: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    out: TextIO = sys.stderr,
    dashboard: DashboardFactory | None = None,
    header_timeout: float = HEADER_TIMEOUT_SECONDS,
    body_timeout: float = BODY_TIMEOUT_SECONDS,
) -> int:
    listener = bind_listener(host, port)  # raises ListenError before anything else starts
    token = os.environ.get(TOKEN_ENV) or None
    app = build_http_app(
        server,
        host=host,
        port=listener.getsockname()[1],
        token=token,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        dashboard=dashboard,
    )
    async with anyio.create_task_group() as group:
        if not await start_serving(
            group,
            app,
            listener,
            lifespan="on",
            header_timeout=header_timeout,
            body_timeout=body_timeout,
        ):
            return 1
        base = f"http://{_host_port(host, listener.getsockname()[1])}"
        await anyio.to_thread.run_sync(
            _banner,
            base + MCP_PATH,
            catalog,
            bool(token),
            out,
            host not in _LOCAL_HOSTS,
            base + "/" if dashboard else None,
        )
    return 0
