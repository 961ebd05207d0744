"""The run dashboard: workflows (with diagrams) and runs (live) in a browser.

An app on the web host (`workrail_mcp.web`, whose public names are all it uses of
`workrail_mcp`): served at ``/`` beside ``/mcp`` by `workrail-mcp --transport http`, and alone by
``workrail dashboard``. Its words for rules and loops are the engine's. One module
per page or concern: `workflows`, `runs`, `run` (pages), `diagram` (the SVG of a workflow),
`forms` (a parameters form), `security` (host, token, CSRF), `rendering` (templates), `app`
(routes) and `command` (``workrail dashboard``).
"""

from workrail_mcp.dashboard.app import build_dashboard

__all__ = ["build_dashboard"]
