"""`workrail-mcp` / `workrail mcp`: parse the command line, build the catalog, serve."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click

from workrail_engine import __version__
from workrail_engine.answers.model_loop import ModelLimits
from workrail_engine.server_command_line import HELP_SETTINGS, parse_command_line
from workrail_mcp.web.options import shared_server_options

__all__ = ["main", "parse_args", "serve"]

REQUEST_RESCAN_SECONDS = 2.0


@click.command(
    "workrail-mcp",
    context_settings=HELP_SETTINGS,
    help="Serve WorkRail workflows to AI agents over the Model Context Protocol.",
)
@click.version_option(
    __version__, "-V", "--version", prog_name="workrail-mcp", message="%(prog)s %(version)s"
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio (what agent clients launch) or Streamable HTTP.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option(
    "--port", type=int, default=8765, show_default=True, help="HTTP port (0 picks a free one)."
)
@click.option(
    "--project",
    metavar="DIR",
    type=click.Path(path_type=Path),
    help="Project directory whose ./workflows and ./.workrail/workflows are served "
    "(default: the client's roots over stdio, else the working directory).",
)
@click.option(
    "--allow-commands",
    is_flag=True,
    help="Let run_workflow execute command steps (off by default).",
)
@click.option(
    "--tools",
    type=click.Choice(["default", "upstream"]),
    help="Tool edition: default (the specs' tools, runs and sessions) or upstream (upstream "
    "WorkRail 3.x's session tools, for agents configured for it).  [default: $WORKRAIL_TOOLS, "
    "else default]",
)
@click.option(
    "--sampling",
    is_flag=True,
    help="Let the client's model answer the prompt steps of sessions and runs "
    "(sampling/createMessage; off "
    "by default; the client must offer sampling).",
)
@click.option(
    "--sampling-calls",
    type=click.IntRange(min=0),
    default=ModelLimits.calls_per_run,
    show_default=True,
    metavar="N",
    help="With --sampling: model calls per run.",
)
@click.option(
    "--sampling-tokens",
    type=click.IntRange(min=0),
    default=ModelLimits.tokens_per_run,
    show_default=True,
    metavar="N",
    help="With --sampling: tokens per run (each call counts its maxTokens).",
)
@click.option(
    "--sampling-max-tokens",
    type=click.IntRange(min=1),
    default=ModelLimits.max_tokens,
    show_default=True,
    metavar="N",
    help="With --sampling: maxTokens of a call when the step sets none.",
)
@shared_server_options
def _command_line(**options: Any) -> SimpleNamespace:
    return SimpleNamespace(**options)


def parse_args(argv: Sequence[str] | None = None) -> SimpleNamespace:
    args = parse_command_line(_command_line, argv, "workrail-mcp")
    if args.tools is None:  # the environment's edition is checked by unknown_edition
        args.tools = os.environ.get("WORKRAIL_TOOLS") or "default"
    return args


def unknown_edition(args: SimpleNamespace) -> str | None:
    """The one line for a WORKRAIL_TOOLS that names no edition (click checks only --tools)."""
    if args.tools in ("default", "upstream"):
        return None
    return (
        f"workrail-mcp: error: WORKRAIL_TOOLS: {args.tools!r} is not an edition (default, upstream)"
    )


def missing_directory(args: SimpleNamespace) -> str | None:
    """The one line for a --project or --workflows directory that does not exist, if any."""
    named = [("--project", args.project)] if args.project is not None else []
    named += [("--workflows", directory) for directory in args.workflows]
    for option, directory in named:
        if not directory.is_dir():
            line = f"workrail-mcp: error: {option}: directory {str(directory)!r} does not exist"
            if "${" in str(directory):  # a client config variable that nobody expanded
                line += " (the MCP client passed its variable unexpanded; give a real path)"
            return line
    return None


log = logging.getLogger("workrail_mcp")


def log_invalid_file(invalid: Any) -> None:
    """One stderr line per workflow file left out of the catalog, with its first problem."""
    errors = [d for d in invalid.diagnostics if d.is_error] or list(invalid.diagnostics)
    first = errors[0] if errors else None
    problem = (
        f"{first.code} {first.message} at {first.pointer or '/'}" if first else "not a workflow"
    )
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    log.warning("left out invalid workflow file %s: %s%s", invalid.path, problem, more)


def _build(args: SimpleNamespace) -> tuple[Any, Any, Any]:
    """The catalog (its first scan started), the run service (HTTP only) and the MCP server."""
    import threading

    from workrail_engine.catalog import Catalog
    from workrail_mcp.server import create_server

    project = (args.project or Path.cwd()).resolve()
    # Re-scans (at most every REQUEST_RESCAN_SECONDS) run on a background thread: a request answers
    # from the current snapshot and never waits for a scan (~0.1-0.4 s for 10,000 files).
    catalog = Catalog.default(
        project_dir=project,
        extra_dirs=[d.resolve() for d in args.workflows],
        rescan_interval=REQUEST_RESCAN_SECONDS,
        background=True,
        report_invalid=log_invalid_file,
    )
    # The first scan starts now, beside the protocol start-up, so that invalid files are
    # reported when the server starts rather than at the first request that reads the catalog.
    threading.Thread(
        target=catalog.refresh,
        kwargs={"force": True},
        name="workrail-catalog-first-scan",
        daemon=True,
    ).start()
    # Followed workflow repositories are fetched on a thread of their own (at once, then every
    # sync interval); a moved one is served from its new commit. Nothing here waits for it.
    from workrail_engine.sources.refresh import BackgroundRefresh

    BackgroundRefresh(lambda: catalog.project_dirs, catalog.reload_repositories).start()
    service = None
    if args.transport == "http":
        from workrail_engine.runs import RunService
        from workrail_engine.runs.resolve import project_of

        # One per process, shared by the run tools and the dashboard (DBOS is one per process).
        service = RunService(project_of(catalog), allow_commands=args.allow_commands, server=True)
    limits = (
        ModelLimits(
            calls_per_run=args.sampling_calls,
            tokens_per_run=args.sampling_tokens,
            max_tokens=args.sampling_max_tokens,
        )
        if args.sampling
        else None
    )
    server = create_server(
        catalog,
        allow_commands=args.allow_commands,
        model_limits=limits,
        # One stdio client may tell us its project; an HTTP server is shared, so it keeps its own.
        use_client_roots=args.transport == "stdio" and args.project is None,
        run_service=service,
        tools_edition=args.tools,
        shared=args.transport == "http",
    )
    return catalog, service, server


def serve(args: SimpleNamespace) -> int:
    from workrail_engine.cyclic_collection import cyclic_collection_paused

    # ~125,000 objects built once and kept for the process's life: a later full pass of the
    # collector over them landed on the first requests after ``initialize``.
    with cyclic_collection_paused(freeze_after=True):
        catalog, service, server = _build(args)
    import anyio

    if args.transport == "http":
        from workrail_mcp.dashboard import build_dashboard
        from workrail_mcp.http import serve_http
        from workrail_mcp.web import HostRules, ListenError

        def dashboard(rules: HostRules, token: str | None) -> Any:
            return build_dashboard(
                catalog,
                service,
                rules=rules,
                token=token,
                allow_commands=args.allow_commands,
            )

        try:
            return anyio.run(
                lambda: serve_http(
                    server,
                    catalog,
                    host=args.host,
                    port=args.port,
                    allowed_hosts=list(args.allowed_host),
                    allowed_origins=list(args.allowed_origin),
                    dashboard=dashboard,
                    header_timeout=args.header_timeout,
                    body_timeout=args.body_timeout,
                )
            )
        except ListenError as error:  # a busy port is the person's to fix: one line, no traceback
            print(f"workrail-mcp: error: {error}", file=sys.stderr)
            return 1
    from workrail_mcp.stdio import serve_stdio

    if sys.stdin.isatty():  # a person at a terminal, not an agent client
        print(
            f"workrail-mcp: serving {len(catalog.entries())} workflows over stdio (JSON-RPC, one message "
            f"per line; workflow files re-scanned every {REQUEST_RESCAN_SECONDS:g} s); for a URL "
            "to point clients at, run with --transport http",
            file=sys.stderr,
        )
    return anyio.run(serve_stdio, server)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    missing = unknown_edition(args) or missing_directory(args)
    if missing is not None:  # like the CLI: a usage error, exit 2, one line
        print(missing, file=sys.stderr)
        return 2
    # stderr keeps warnings and worse even when a client asks for debug log messages (which
    # lowers our loggers' levels so that those records are made at all).
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(logging.Formatter("workrail-mcp: %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[stderr])
    try:
        return serve(args)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
