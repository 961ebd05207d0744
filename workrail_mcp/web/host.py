"""One listening port and the apps mounted on it: what `workrail-mcp --transport http` (the MCP
endpoint at ``/mcp``, the dashboard beside it) and `workrail dashboard` (the dashboard alone)
both open before they serve."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

import anyio.abc

from workrail_mcp.web.access import HostRules, token_from_environment
from workrail_mcp.web.listener import LOCAL_HOSTS, bind_listener, host_port, start_serving
from workrail_mcp.web.options import BODY_TIMEOUT_SECONDS, HEADER_TIMEOUT_SECONDS

__all__ = ["PathDispatch", "WebHost"]


class WebHost:
    """A bound port with the rules every app behind it keeps: the Host/Origin names it answers
    as and the token (None: no token asked)."""

    def __init__(
        self, listener: socket.socket, host: str, token: str | None, rules: HostRules
    ) -> None:
        self.listener = listener
        self.host = host
        self.port: int = listener.getsockname()[1]
        self.token = token
        self.rules = rules

    @classmethod
    def open(
        cls,
        host: str,
        port: int,
        *,
        allowed_hosts: Sequence[str] = (),
        allowed_origins: Sequence[str] = (),
    ) -> WebHost:
        """Bind ``host:port`` (port 0 picks a free one; `ListenError` when it cannot be had)
        and read the token from the environment."""
        listener = bind_listener(host, port)
        rules = HostRules(host, listener.getsockname()[1], allowed_hosts, allowed_origins)
        return cls(listener, host, token_from_environment(), rules)

    @property
    def exposed(self) -> bool:
        """Whether other machines may reach the port."""
        return self.host not in LOCAL_HOSTS

    def url(self, path: str = "/") -> str:
        return f"http://{host_port(self.host, self.port)}{path}"

    async def serve(
        self,
        group: anyio.abc.TaskGroup,
        app: Any,
        *,
        lifespan: str,
        header_timeout: float = HEADER_TIMEOUT_SECONDS,
        body_timeout: float = BODY_TIMEOUT_SECONDS,
    ) -> bool:
        """Serve ``app`` in ``group`` once it is listening; False when uvicorn stopped first."""
        return await start_serving(
            group,
            app,
            self.listener,
            lifespan=lifespan,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
        )


class PathDispatch:
    """ASGI: ``path`` and everything under it (and the lifespan, which an app mounted there may
    need) to ``mounted``, every other path to ``rest``."""

    def __init__(self, path: str, mounted: Any, rest: Any) -> None:
        self.path = path
        self.mounted = mounted
        self.rest = rest

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path == self.path or path.startswith(self.path + "/"):
            return await self.mounted(scope, receive, send)
        return await self.rest(scope, receive, send)
