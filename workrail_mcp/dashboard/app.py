"""The dashboard as one ASGI app: its routes, behind the host, token and CSRF checks.

Pages read the run store through `RunHistory` (never through DBOS, so reading costs no
executor); actions (cancel, start, run again from a step) go through the process's `RunService`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from workrail_engine.runs.history import RunHistory
from workrail_mcp.dashboard import run as run_views
from workrail_mcp.dashboard import runs as runs_views
from workrail_mcp.dashboard import workflows as workflow_views
from workrail_mcp.dashboard.invalid_files import InvalidFilesListing
from workrail_mcp.dashboard.rendering import Pages
from workrail_mcp.dashboard.security import SECURITY_HEADERS, SIGNIN_WINDOW_SECONDS, Access
from workrail_mcp.web import HostRules, client_key, limited

if TYPE_CHECKING:
    from workrail_engine.catalog import CatalogProtocol

__all__ = ["MAX_FORM_BYTES", "build_dashboard"]

_OPEN_PATHS = ("/signin",)
# The largest request body any dashboard route takes (a form with a workflow's parameters);
# larger is 413 before anything parses it, signed in or not.
MAX_FORM_BYTES = 1024 * 1024


async def signin_form(request: Request) -> Response:
    if request.app.state.access.token is None:  # nothing to sign in to
        return RedirectResponse("/", status_code=303)
    return request.app.state.pages.page(
        request, "signin.html", code=401, nav=None, next=_next(request.query_params.get("next"))
    )


def _next(target: str | None) -> str:
    """Where to go after signing in: a path of ours, never another site."""
    # "//host" and "/\\host" are other sites to a browser, which also drops tabs and newlines
    if (
        not target
        or not target.startswith("/")
        or target[1:2] in ("/", "\\")
        or any(c <= " " for c in target)
    ):
        return "/"
    parts = urlsplit(target)
    return parts.path + (f"?{parts.query}" if parts.query else "")


async def signin(request: Request) -> Response:
    access: Access = request.app.state.access
    client = client_key(request.scope)
    if access.token is not None and not access.signin_attempt(client):
        return Response(
            "too many failed sign-ins from this address; try again in a minute",
            status_code=429,
            headers={"retry-after": str(int(SIGNIN_WINDOW_SECONDS))},
        )
    form = await request.form()
    if request.headers.get("sec-fetch-site") == "cross-site":
        return Response("cross-site sign-in refused", status_code=403)
    given = form.get("token")
    target = _next(form.get("next") if isinstance(form.get("next"), str) else None)
    if access.token is None:
        return RedirectResponse(target, status_code=303)
    if not isinstance(given, str) or not access.token_matches(given):
        await anyio.sleep(0.5)  # guessing tokens through the form stays slow
        return request.app.state.pages.page(
            request,
            "signin.html",
            code=401,
            nav=None,
            next=target,
            problem="That token is not the one this server was started with.",
        )
    access.signin_succeeded(client)
    response = RedirectResponse(target, status_code=303)
    access.session_cookie(response)
    return response


async def signout(request: Request) -> Response:
    _, refused = await request.app.state.access.checked_form(request)
    if refused is not None:
        return refused
    response = RedirectResponse("/signin", status_code=303)
    request.app.state.access.sign_out(request, response)
    return response


class _Gate:
    """Host/Origin first (DNS rebinding), then the token; the sign-in form and the static files
    (no data in them) are the only things served before signing in."""

    def __init__(self, app: Any, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope, receive)
        refused = await self.access.refused_host(request)
        if refused is not None:
            return await refused(scope, receive, send)
        path = scope.get("path", "")
        if path in _OPEN_PATHS or path.startswith("/static/") or self.access.signed_in(request):
            return await self.app(scope, receive, send)
        if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
            target = path + (
                f"?{scope['query_string'].decode()}" if scope.get("query_string") else ""
            )
            response: Response = RedirectResponse(
                "/signin?" + _encode_next(target), status_code=303
            )
        else:
            response = Response(
                "sign in first",
                status_code=401,
                headers={"www-authenticate": 'Bearer realm="workrail"'},
            )
        await response(scope, receive, send)


def _encode_next(target: str) -> str:
    return urlencode({"next": target})


def build_dashboard(
    catalog: CatalogProtocol,
    service: Any,
    *,
    rules: HostRules,
    token: str | None,
    allow_commands: bool,
    history: RunHistory | None = None,
) -> Any:
    """The dashboard app: ``catalog`` for the workflows, ``service`` (a `RunService`) for actions."""
    routes = [
        Route("/", runs_views.runs_page),
        Route("/runs", runs_views.runs_page),
        Route("/live/runs", runs_views.runs_fragment),
        Route("/runs/{run_id}", run_views.run_page),
        Route("/live/runs/{run_id}", run_views.run_fragment),
        Route("/runs/{run_id}/cancel", run_views.cancel_run, methods=["POST"]),
        Route("/runs/{run_id}/fork", run_views.fork_run, methods=["POST"]),
        Route("/workflows", workflow_views.workflows_page),
        Route("/workflows/{workflow_id}", workflow_views.workflow_page),
        Route("/workflows/{workflow_id}/dry-run", workflow_views.dry_run, methods=["POST"]),
        Route("/workflows/{workflow_id}/run", workflow_views.start_run, methods=["POST"]),
        Route("/signin", signin_form, methods=["GET"]),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Mount(
            "/static", StaticFiles(packages=[("workrail_mcp.dashboard", "static")]), name="static"
        ),
    ]
    app = Starlette(routes=routes)
    access = Access(rules, token, allow_commands=allow_commands)
    app.state.catalog = catalog
    app.state.service = service
    app.state.history = history or RunHistory(
        url=getattr(service, "database", None), home=getattr(service, "home", None)
    )
    app.state.pages = Pages()
    app.state.invalid_files = InvalidFilesListing()
    app.state.access = access
    return _Headers(limited(_Gate(app, access), MAX_FORM_BYTES))


class _Headers:
    """The security headers on every response (static files, refusals and errors included), and a
    ``Server-Timing`` header with the time the server took to start answering (the benchmark
    reads it)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        began = time.perf_counter()

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                spent = (time.perf_counter() - began) * 1000
                message["headers"] = [
                    *message.get("headers", []),
                    *(
                        (name.encode(), value.encode())
                        for name, value in SECURITY_HEADERS.items()
                        if name.encode() not in present
                    ),
                    (b"server-timing", f"app;dur={spent:.2f}".encode()),
                ]
            await send(message)

        await self.app(scope, receive, with_headers)
