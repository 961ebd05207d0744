"""`workrail dashboard [--port N] [--open]`: the dashboard alone, for people who run only the CLI.

It reads the same run store as the CLI (``WORKRAIL_HOME`` / ``WORKRAIL_DATABASE_URL``), so the
runs a terminal starts show up live. Same Host/Origin rules and ``WORKRAIL_HTTP_TOKEN`` as the
MCP server's HTTP transport.
"""

from __future__ import annotations

import logging
import sys
import threading
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click

from workrail_engine.server_command_line import HELP_SETTINGS, parse_command_line
from workrail_mcp.web.options import shared_server_options

__all__ = ["main"]

DEFAULT_PORT = 8766  # next to the MCP server's 8765, so both can run at once


@click.command(
    "workrail dashboard",
    context_settings=HELP_SETTINGS,
    help="Serve the WorkRail dashboard (workflows and runs, live) on a local URL.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address.")
@click.option(
    "--port", type=int, default=DEFAULT_PORT, show_default=True, help="Port (0 picks a free one)."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the dashboard in a browser.")
@click.option(
    "--project",
    metavar="DIR",
    type=click.Path(path_type=Path),
    help="Project directory (default: the working directory).",
)
@click.option(
    "--allow-commands",
    is_flag=True,
    help="Allow starting runs (with command steps) from the dashboard.",
)
@shared_server_options
def _command_line(**options: Any) -> SimpleNamespace:
    return SimpleNamespace(**options)


def parse_args(argv: Sequence[str] | None) -> SimpleNamespace:
    return parse_command_line(_command_line, argv, "workrail dashboard")


def _open_quietly(service: Any) -> None:
    try:
        service.start()
    except Exception:  # the pages still work without it; an action will report the problem
        logging.getLogger(__name__).exception("could not open the run store")


async def _serve(args: SimpleNamespace) -> int:
    import anyio

    from workrail_engine.catalog import Catalog
    from workrail_engine.runs import RunService
    from workrail_engine.runs.resolve import store_exists
    from workrail_mcp.dashboard import build_dashboard
    from workrail_mcp.web import TOKEN_ENV, WebHost

    project = (args.project or Path.cwd()).resolve()
    catalog = Catalog.default(
        project_dir=project,
        extra_dirs=[d.resolve() for d in args.workflows],
        rescan_interval=2.0,
        background=True,
    )
    web = WebHost.open(
        args.host,
        args.port,
        allowed_hosts=list(args.allowed_host),
        allowed_origins=list(args.allowed_origin),
    )
    service = RunService(project, allow_commands=args.allow_commands, server=True)
    app = build_dashboard(
        catalog,
        service,
        rules=web.rules,
        token=web.token,
        allow_commands=args.allow_commands,
    )
    async with anyio.create_task_group() as group:
        if not await web.serve(
            group,
            app,
            lifespan="off",
            header_timeout=args.header_timeout,
            body_timeout=args.body_timeout,
        ):
            return 1
        if store_exists():
            # The durable layer is what a cancel goes through: opening it now (about a second)
            # keeps that second out of the first click on "Cancel run".
            threading.Thread(target=_open_quietly, args=(service,), daemon=True).start()
        url = web.url("/")
        lines = [f"WorkRail dashboard listening on {url}"]
        if web.token:
            lines.append(f"Sign in with the token from {TOKEN_ENV}.")
        lines.append("Press Ctrl+C to stop.")
        print("\n".join(lines), file=sys.stderr, flush=True)
        if args.open_browser:
            await anyio.to_thread.run_sync(webbrowser.open, url)
    service.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    import anyio

    from workrail_mcp.web import ListenError

    args = parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format="workrail dashboard: %(levelname)s %(message)s",
    )
    try:
        return anyio.run(_serve, args)
    except ListenError as error:
        print(f"workrail dashboard: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
