"""`workrail dashboard [--port N] [--open]`: the dashboard alone, for people who run only the CLI.

It reads the same run store as the CLI (``WORKRAIL_HOME`` / ``WORKRAIL_DATABASE_URL``), so the
runs a terminal starts show up live. Same Host/Origin rules and ``WORKRAIL_HTTP_TOKEN`` as the
MCP server's HTTP transport.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

DEFAULT_PORT = 8766  # next to the MCP server's 8765, so both can run at once


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="workrail dashboard",
        description="Serve the WorkRail dashboard (workflows and runs, live) on a local URL.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks one)"
    )
    parser.add_argument("--open", action="store_true", help="open the dashboard in a browser")
    parser.add_argument(
        "--project", metavar="DIR", type=Path, default=None, help="project directory (default .)"
    )
    parser.add_argument(
        "--workflows",
        metavar="DIR",
        action="append",
        default=[],
        type=Path,
        help="an extra workflow directory (repeatable)",
    )
    parser.add_argument(
        "--allow-commands",
        action="store_true",
        help="allow starting runs (with command steps) from the dashboard",
    )
    parser.add_argument(
        "--allowed-host",
        metavar="NAME",
        action="append",
        default=[],
        help="another Host name browsers may use (DNS-rebinding protection)",
    )
    parser.add_argument(
        "--allowed-origin",
        metavar="ORIGIN",
        action="append",
        default=[],
        help="another Origin whose pages may call this server (e.g. https://dash.example.org)",
    )
    return parser.parse_args(argv)


def _open_quietly(service: Any) -> None:
    try:
        service.start()
    except Exception:  # the pages still work without it; an action will report the problem
        logging.getLogger(__name__).exception("could not open the run store")


async def _serve(args: argparse.Namespace) -> int:
    import anyio

    from workrail_engine.catalog import Catalog
    from workrail_engine.runs import RunService
    from workrail_engine.runs.resolve import store_exists
    from workrail_mcp.dashboard import build_dashboard
    from workrail_mcp.http import (
        TOKEN_ENV,
        _host_port,
        _security,
        bind_listener,
        start_serving,
    )

    project = (args.project or Path.cwd()).resolve()
    catalog = Catalog.default(
        project_dir=project,
        extra_dirs=[d.resolve() for d in args.workflows],
        rescan_interval=2.0,
        background=True,
    )
    listener = bind_listener(args.host, args.port)
    token = os.environ.get(TOKEN_ENV) or None
    service = RunService(project, allow_commands=args.allow_commands, server=True)
    app = build_dashboard(
        catalog,
        service,
        security=_security(
            args.host, listener.getsockname()[1], args.allowed_host, args.allowed_origin
        ),
        token=token,
        allow_commands=args.allow_commands,
    )
    async with anyio.create_task_group() as group:
        if not await start_serving(group, app, listener, lifespan="off"):
            return 1
        if store_exists():
            # The durable layer is what a cancel goes through: opening it now (about a second)
            # keeps that second out of the first click on "Cancel run".
            threading.Thread(target=_open_quietly, args=(service,), daemon=True).start()
        url = f"http://{_host_port(args.host, listener.getsockname()[1])}/"
        lines = [f"WorkRail dashboard listening on {url}"]
        if token:
            lines.append(f"Sign in with the token from {TOKEN_ENV}.")
        lines.append("Press Ctrl+C to stop.")
        print("\n".join(lines), file=sys.stderr, flush=True)
        if args.open:
            await anyio.to_thread.run_sync(webbrowser.open, url)
    service.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    import anyio

    from workrail_mcp.http import ListenError

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
