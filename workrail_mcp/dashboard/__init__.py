"""The run dashboard: workflows (with diagrams) and runs (live) in a browser.

Served by the HTTP transport at ``/`` beside ``/mcp`` and by ``workrail dashboard``. One module
per page or concern: `workflows`, `runs`, `run` (pages), `diagram` (the SVG of a workflow),
`forms` (a parameters form), `security` (host, token, CSRF), `rendering` (templates), `app`
(routes) and `command` (``workrail dashboard``).
"""

from workrail_mcp.dashboard.app import build_dashboard

__all__ = ["build_dashboard"]
