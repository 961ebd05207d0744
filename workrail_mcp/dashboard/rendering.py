"""Pages from Jinja2 templates (autoescaped: a step printing ``<script>`` shows as text), with the
dashboard's security headers on every response."""

from __future__ import annotations

import time
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

__all__ = ["Pages", "duration_text"]


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def moment_text(epoch: float | None) -> str:
    if not epoch:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


class Pages:
    def __init__(self) -> None:
        self.env = Environment(
            loader=PackageLoader("workrail_mcp.dashboard", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["duration"] = duration_text
        self.env.filters["moment"] = moment_text

    def html(self, name: str, **context: Any) -> str:
        return self.env.get_template(name).render(**context)

    def page(self, request: Request, name: str, *, code: int = 200, **context: Any) -> Response:
        access = request.app.state.access
        context.setdefault("csrf", access.csrf_token(request))
        context.setdefault("signed_out_allowed", access.token is not None)
        context.setdefault("allow_commands", access.allow_commands)
        return HTMLResponse(self.html(name, request=request, **context), code)

    @staticmethod
    def markup(text: str) -> Markup:
        """Markup built by our own code with every piece of data escaped (the SVG diagrams)."""
        return Markup(text)
