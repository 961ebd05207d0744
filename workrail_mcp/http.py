"""MCP over HTTP: the SDK's Streamable HTTP app at ``/mcp`` on the web host, the dashboard beside
it, and the start banner.

In front of the SDK's app, in this order: the bearer token (`web.BearerTokenGate`), the session
admission (`http_sessions`), the body cap (`web.limited`) and the JSON screen (`http_screen`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import anyio
from mcp.server import MCPServer
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from workrail_mcp.http_screen import RequestScreen
from workrail_mcp.http_sessions import MAX_SESSIONS, SESSION_IDLE_SECONDS, SessionAdmission
from workrail_mcp.server import SERVER_NAME
from workrail_mcp.web import (
    BODY_TIMEOUT_SECONDS,
    HEADER_TIMEOUT_SECONDS,
    TOKEN_ENV,
    BearerTokenGate,
    HostRules,
    PathDispatch,
    WebHost,
    limited,
)

if TYPE_CHECKING:
    from workrail_engine.catalog import CatalogProtocol

__all__ = ["INSPECTOR_PACKAGE", "MCP_PATH", "DashboardFactory", "build_http_app", "serve_http"]

MCP_PATH = "/mcp"
# The MCP Inspector release the banner's "try it" line runs, pinned: unpinned, npx on Node 20 picks
# 0.15 (every later release declares Node 22), whose CLI has no --header. This one's CLI runs on
# Node 20 too (npm only warns about the declared engine); tests/mcp/test_real_clients.py runs it.
INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0"

# The dashboard app, made with the host's Host/Origin rules and token.
DashboardFactory = Callable[[HostRules, "str | None"], Any]


def build_http_app(
    server: MCPServer, web: WebHost, *, dashboard: DashboardFactory | None = None
) -> Any:
    """The MCP app at ``/mcp``; with ``dashboard`` (called with the host's Host/Origin rules and
    token), the dashboard at every other path."""
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=web.host,
        transport_security=web.rules.settings,
        session_idle_timeout=SESSION_IDLE_SECONDS,
        # a backstop only: SessionAdmission keeps to MAX_SESSIONS and makes room by eviction
        max_sessions=2 * MAX_SESSIONS,
    )
    # bounded here too: the screen reads the body before the SDK's own cap would
    app = SessionAdmission(
        limited(RequestScreen(app, web.rules), DEFAULT_MAX_REQUEST_BODY_SIZE), MCP_PATH
    )
    mcp = BearerTokenGate(app, web.token) if web.token else app
    return (
        mcp if dashboard is None else PathDispatch(MCP_PATH, mcp, dashboard(web.rules, web.token))
    )


def _banner(
    url: str,
    catalog: CatalogProtocol,
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
    line += f"; workflow files are re-scanned every {catalog.rescan_interval:g} s"
    lines.append(line)
    header = f' --header "Authorization: Bearer ${TOKEN_ENV}"' if token else ""
    lines.append(f"Connect Claude Code:  claude mcp add --transport http workrail {url}{header}")
    lines.append(
        f"Or try it:            npx -y {INSPECTOR_PACKAGE} --cli {url} --transport http{header} --method tools/list"
    )
    if token:
        lines.append(f"Clients must send the bearer token from {TOKEN_ENV}.")
    elif exposed:
        lines.append(
            f"Warning: listening beyond this machine without {TOKEN_ENV}; anyone who can reach the port can use it."
        )
    lines.append("Press Ctrl+C to stop.")
    print("\n".join(lines), file=out, flush=True)


async def serve_http(
    server: MCPServer,
    catalog: CatalogProtocol,
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
    # raises ListenError before anything else starts
    web = WebHost.open(host, port, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
    app = build_http_app(server, web, dashboard=dashboard)
    async with anyio.create_task_group() as group:
        if not await web.serve(
            group, app, lifespan="on", header_timeout=header_timeout, body_timeout=body_timeout
        ):
            return 1
        await anyio.to_thread.run_sync(
            _banner,
            web.url(MCP_PATH),
            catalog,
            bool(web.token),
            out,
            web.exposed,
            web.url("/") if dashboard else None,
        )
    return 0
