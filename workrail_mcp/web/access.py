"""What the web host admits, for every app it serves alike: the Host and Origin names it answers as
(DNS-rebinding protection), the bearer token from ``WORKRAIL_HTTP_TOKEN``, a request body's size,
and whose request it is (for limits per client address).

The Host/Origin check and the body cap are the MCP SDK's own middleware, so that ``/mcp`` and the
dashboard beside it refuse exactly the same requests; nothing here speaks the MCP protocol.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Sequence
from typing import Any

from mcp.server.transport_security import (
    RequestBodyLimitMiddleware,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from starlette.requests import Request
from starlette.responses import Response

from workrail_mcp.web.listener import LOCAL_HOSTS

__all__ = [
    "TOKEN_ENV",
    "BearerTokenGate",
    "HostRules",
    "bearer_authorized",
    "client_key",
    "limited",
    "token_from_environment",
]

TOKEN_ENV = "WORKRAIL_HTTP_TOKEN"


def token_from_environment() -> str | None:
    """The token every request must carry, or None when `TOKEN_ENV` is unset or empty."""
    return os.environ.get(TOKEN_ENV) or None


def bearer_authorized(header: bytes, token: bytes) -> bool:
    """Whether an ``Authorization`` header carries ``token``.

    The scheme is matched case-insensitively (RFC 9110 §11.1), the token exactly and in
    constant time."""
    scheme, _, credentials = header.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.lstrip(b" "), token)


class BearerTokenGate:
    """ASGI middleware: without ``Authorization: Bearer <token>``, 401 and nothing else."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or bearer_authorized(
            dict(scope.get("headers") or ()).get(b"authorization", b""), self.expected
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


class HostRules:
    """The Host and Origin headers a server bound to ``host:port`` accepts, on every bind.

    Only the names it listens as (and ``extra_hosts``): a browser's Origin must be this server's
    own (scheme, host and port), since a page served by another local port is another site. The
    SDK compares Origin strings exactly, so each accepted spelling is listed; a browser leaves
    out the port when it is 80.
    """

    def __init__(
        self,
        host: str,
        port: int,
        extra_hosts: Sequence[str] = (),
        extra_origins: Sequence[str] = (),
    ) -> None:
        names = ["127.0.0.1", "localhost", "[::1]"]
        if host not in LOCAL_HOSTS:
            names.append(f"[{host}]" if ":" in host else host)
        names.extend(extra_hosts)
        ports = [f":{port}", ""] if port == 80 else [f":{port}"]
        # the SDK's form of the rules, for its Streamable HTTP app
        self.settings = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{name}:*" for name in names],
            allowed_origins=[f"http://{name}{p}" for name in names for p in ports]
            + [origin.rstrip("/") for origin in extra_origins],
        )
        self._checker = TransportSecurityMiddleware(self.settings)

    async def refusal(self, request: Request, *, json_post: bool = False) -> Response | None:
        """421 for a Host, 403 for an Origin that is not ours; None when both are.

        ``json_post``: the request is a POST whose body must be JSON (the SDK then checks its
        ``Content-Type`` as well)."""
        return await self._checker.validate_request(request, is_post=json_post)


def client_key(scope: Any) -> str:
    """Whose request this is: the peer's address; an IPv6 peer's /64 network (which one host
    usually holds whole)."""
    client = scope.get("client")
    if not client:
        return "unknown"
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return str(client[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def limited(app: Any, max_bytes: int) -> Any:
    """``app`` behind a request-body cap: past ``max_bytes``, 413 and the app never runs (a
    declared length past the cap is refused before a byte is read, a chunked body as soon as it
    passes it)."""
    return RequestBodyLimitMiddleware(app, max_bytes)
