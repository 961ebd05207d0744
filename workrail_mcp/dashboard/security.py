"""Who may see the dashboard and change things through it.

- The same DNS-rebinding rules as ``/mcp``: the Host (and Origin, when sent) must be a name the
  server listens as (`workrail_mcp.web.HostRules`, the web host's, which ``/mcp`` keeps too).
- With ``WORKRAIL_HTTP_TOKEN`` set, nothing but the sign-in form and the static files (public
  code, no data) is served without the token: either ``Authorization: Bearer <token>`` or the
  session cookie the sign-in form sets (HttpOnly, SameSite=Strict). The cookie holds a random
  value drawn at each sign-in and known only to this process's memory, never the token: signing
  out, or restarting the server, revokes it. The token is never taken from a URL.
- Sign-in attempts are limited per client address (`SIGNIN_FAILURES` failures per
  `SIGNIN_WINDOW_SECONDS`): the form's delay slows one guesser, not many guesses in parallel.
- A notice shown on a page (``?notice=``) is one this server issued: it carries a mark (an HMAC
  with the process's key, bound to the page) that nobody else can make.
- Every state-changing request (POST) carries a CSRF token bound to the session, and a
  cross-site ``Sec-Fetch-Site`` is refused (`Access.checked_form`, the one gate of every action).
- Starting a run (a new one, or one forked from a step of another) needs a server started with
  ``--allow-commands``, as the run tools' command steps do.
- Every response forbids inline script and framing (`SECURITY_HEADERS`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict, deque
from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from workrail_mcp.web import HostRules, bearer_authorized

__all__ = [
    "COOKIE",
    "MAX_SIGNED_IN",
    "RUNS_NEED_ALLOW_COMMANDS",
    "SECURITY_HEADERS",
    "SESSION_SECONDS",
    "SIGNIN_FAILURES",
    "SIGNIN_WINDOW_SECONDS",
    "Access",
]

COOKIE = "workrail_session"
SESSION_SECONDS = 86400 * 30  # a sign-in lasts this long (the cookie's max-age)
MAX_SIGNED_IN = 1000  # sign-ins remembered at once; past it the oldest is signed out
SIGNIN_FAILURES = 10  # failed sign-ins one address may make in SIGNIN_WINDOW_SECONDS
SIGNIN_WINDOW_SECONDS = 60.0
_TRACKED_ADDRESSES = 10_000  # addresses whose failures are remembered; the oldest go first
RUNS_NEED_ALLOW_COMMANDS = (
    "starting runs from the dashboard needs a server started with --allow-commands"
)
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
    """The dashboard's checks for one server: its allowed names, its token, its CSRF key, and
    whether it may start runs."""

    def __init__(self, rules: HostRules, token: str | None, *, allow_commands: bool) -> None:
        self._rules = rules
        self.token = token
        self.allow_commands = allow_commands
        # cookie value -> when it expires (monotonic); in memory only, so a restart signs all out
        self._sessions: OrderedDict[str, float] = OrderedDict()
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._csrf_key = secrets.token_bytes(32)  # per process: a restart signs forms anew

    async def refused_host(self, request: Request) -> Response | None:
        """421/403 for a Host or Origin that is not ours (DNS rebinding), as on ``/mcp``."""
        return await self._rules.refusal(request)

    def signed_in(self, request: Request) -> bool:
        if self.token is None:
            return True
        if bearer_authorized(
            request.headers.get("authorization", "").encode(), self.token.encode()
        ):
            return True
        # a dict look-up, not a comparison: the random values are not derived from anything an
        # attacker could approach byte by byte
        expires = self._sessions.get(request.cookies.get(COOKIE, ""))
        return expires is not None and expires > time.monotonic()

    def token_matches(self, given: str) -> bool:
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def session_cookie(self, response: Response) -> None:
        """Sign in: a new random cookie value, remembered until it expires or is signed out."""
        value = secrets.token_urlsafe(32)
        self._sessions[value] = time.monotonic() + SESSION_SECONDS
        while len(self._sessions) > MAX_SIGNED_IN:
            self._sessions.popitem(last=False)
        response.set_cookie(
            COOKIE, value, httponly=True, samesite="strict", path="/", max_age=SESSION_SECONDS
        )

    def sign_out(self, request: Request, response: Response) -> None:
        self._sessions.pop(request.cookies.get(COOKIE, ""), None)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")

    def signin_attempt(self, client: str) -> bool:
        """Whether ``client`` (an address) may try a token now; if so the try counts as a
        failure until `signin_succeeded` says otherwise. Checking and counting happen together,
        so guesses sent in parallel cannot all pass the check before any is counted."""
        failures = self._failures.get(client)
        if failures is not None:
            cutoff = time.monotonic() - SIGNIN_WINDOW_SECONDS
            while failures and failures[0] < cutoff:
                failures.popleft()
            if len(failures) >= SIGNIN_FAILURES:
                return False
        self._failures.setdefault(client, deque()).append(time.monotonic())
        self._failures.move_to_end(client)
        while len(self._failures) > _TRACKED_ADDRESSES:
            self._failures.popitem(last=False)
        return True

    def signin_succeeded(self, client: str) -> None:
        failures = self._failures.get(client)
        if failures:
            failures.pop()
        if not failures:
            self._failures.pop(client, None)

    def notice_mark(self, where: str, notice: str) -> str:
        """The mark that shows ``notice`` on the page at ``where`` was issued by this server."""
        message = f"notice\0{where}\0{notice}".encode()
        return hmac.new(self._csrf_key, message, hashlib.sha256).hexdigest()[:32]

    def issued_notice(self, where: str, notice: str | None, mark: str | None) -> str:
        """``notice`` if ``mark`` is this server's for it on ``where``, else nothing."""
        if not notice or not mark:
            return ""
        expected = self.notice_mark(where, notice)
        return notice if hmac.compare_digest(mark.encode(), expected.encode()) else ""

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

    async def checked_form(
        self, request: Request, *, starts_run: bool = False
    ) -> tuple[FormData, Response | None]:
        """The form of a state-changing request, and its refusal when there is one: ``403`` for a
        CSRF token that is not this session's (or a cross-site request), and, for an action that
        ``starts_run``, ``403`` with a page saying why on a server without ``--allow-commands``."""
        form = await request.form()
        if not await self.csrf_ok(request, form):
            return form, Response("CSRF check failed", status_code=403)
        if starts_run and not self.allow_commands:
            return form, request.app.state.pages.page(
                request,
                "refused.html",
                code=403,
                nav="runs",
                problem=RUNS_NEED_ALLOW_COMMANDS,
            )
        return form, None
