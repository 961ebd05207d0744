"""Who may see the dashboard and change things through it.

- The same DNS-rebinding rules as ``/mcp``: the Host (and Origin, when sent) must be a name the
  server listens as (`workrail_mcp.http.transport_security`), checked by the SDK's own checker.
- With ``WORKRAIL_HTTP_TOKEN`` set, nothing but the sign-in form and the static files (public
  code, no data) is served without the token: either ``Authorization: Bearer <token>`` or the
  session cookie the sign-in form sets (HttpOnly, SameSite=Strict). The cookie holds an HMAC of
  the token, never the token, and the token is never taken from a URL.
- Every state-changing request (POST) carries a CSRF token bound to the session, and a
  cross-site ``Sec-Fetch-Site`` is refused.
- Every response forbids inline script and framing (`SECURITY_HEADERS`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response

from workrail_mcp.http import bearer_authorized

__all__ = ["COOKIE", "SECURITY_HEADERS", "Access"]

COOKIE = "workrail_session"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    # same-origin, not no-referrer: with no-referrer a form POST carries "Origin: null", which the
    # Origin check must refuse
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


class Access:
    """The dashboard's checks for one server: its allowed names, its token, its CSRF key."""

    def __init__(self, settings: TransportSecuritySettings, token: str | None) -> None:
        self._hosts = TransportSecurityMiddleware(settings)
        self.token = token
        self._session = (
            hmac.new(token.encode(), b"workrail-dashboard-session", hashlib.sha256).hexdigest()
            if token
            else None
        )
        self._csrf_key = secrets.token_bytes(32)  # per process: a restart signs forms anew

    async def refused_host(self, request: Request) -> Response | None:
        """421/403 for a Host or Origin that is not ours (DNS rebinding), as on ``/mcp``."""
        return await self._hosts.validate_request(request, is_post=False)

    def signed_in(self, request: Request) -> bool:
        if self.token is None:
            return True
        if bearer_authorized(
            request.headers.get("authorization", "").encode(), self.token.encode()
        ):
            return True
        cookie = request.cookies.get(COOKIE, "")
        assert self._session is not None
        return hmac.compare_digest(cookie.encode(), self._session.encode())

    def token_matches(self, given: str) -> bool:
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def session_cookie(self, response: Response) -> None:
        assert self._session is not None
        response.set_cookie(
            COOKIE, self._session, httponly=True, samesite="strict", path="/", max_age=86400 * 30
        )

    def csrf_token(self, request: Request) -> str:
        """Bound to the session (the cookie, or "anonymous" without a token)."""
        identity = request.cookies.get(COOKIE, "") if self.token else "anonymous"
        return hmac.new(self._csrf_key, identity.encode(), hashlib.sha256).hexdigest()

    async def csrf_ok(self, request: Request, form: Any) -> bool:
        if request.headers.get("sec-fetch-site") == "cross-site":
            return False
        given = request.headers.get(CSRF_HEADER) or (form.get(CSRF_FIELD) if form else None)
        return isinstance(given, str) and hmac.compare_digest(
            given.encode(), self.csrf_token(request).encode()
        )
