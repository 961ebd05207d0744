"""``workrail-lsp``: the WorkRail language server over stdio. stdout carries protocol only."""

from __future__ import annotations

import gc
import logging
import os
import sys
from types import SimpleNamespace
from typing import Any, BinaryIO

from . import tracing
from .fast_start import ENVIRONMENT_SWITCH
from .message_size import LineReader, SizeLimitedStream

__all__ = ["main"]

# CPython's cyclic collector runs a young-generation pass every 700 container allocations (net of
# those freed), and opening a 1 MB workflow keeps ~130,000 alive (its value, findings,
# positions): passes inside the request, each scanning what survived the last ones. Here the
# passes run when the server is idle (idle_work.IdleWork); this threshold only bounds a long
# burst of requests with no pause. What an editor session allocates is almost all acyclic (JSON
# values, findings), freed by reference counting, which the count does not include.
YOUNG_GENERATION_THRESHOLD = 1_000_000


def _parse(argv: list[str]) -> SimpleNamespace:
    """The options, read by click as every `workrail` command's are (help, usage errors, exit 2)."""
    import click

    from workrail_engine.server_command_line import HELP_SETTINGS, parse_command_line

    from . import __version__

    @click.command(
        "workrail-lsp",
        context_settings=HELP_SETTINGS,
        help="WorkRail language server (LSP over stdio) for workflow files.",
    )
    @click.version_option(
        __version__, "-V", "--version", prog_name="workrail-lsp", message="%(prog)s %(version)s"
    )
    @click.option(
        "--stdio",
        is_flag=True,
        help="Talk LSP over stdin/stdout (the default; accepted for editors that pass it).",
    )
    @click.option(
        "--fast-start/--no-fast-start",
        default=True,
        show_default=True,
        envvar=ENVIRONMENT_SWITCH,
        show_envvar=True,  # in the help, and in the error for a value that is not a boolean
        help=(
            "Answer initialize and the first opened workflow's diagnostics before pygls loads "
            f"(docs/lsp.md, 'Start-up'); --no-fast-start, or {ENVIRONMENT_SWITCH}=0, leaves "
            "every message to pygls."
        ),
    )
    @click.option(
        "--log-level",
        type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
        default="WARNING",
        show_default=True,
        help="Log level (logs go to stderr).",
    )
    def command_line(**options: Any) -> SimpleNamespace:
        return SimpleNamespace(**options)

    return parse_command_line(command_line, argv, "workrail-lsp")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Editors start the server with no arguments or with --stdio; click (and what it loads) is
    # left out of that start-up, which the editor waits for.
    log_level, fast_start = "WARNING", True
    if argv not in ([], ["--stdio"]) or ENVIRONMENT_SWITCH in os.environ:
        options = _parse(argv)
        log_level, fast_start = options.log_level, options.fast_start
    logging.basicConfig(
        stream=sys.stderr,
        level=log_level,
        format="workrail-lsp %(levelname)s %(name)s: %(message)s",
    )
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD)  # the older generations' thresholds are kept
    tracing.start_from_environment()
    stdin: LineReader = sys.stdin.buffer
    stdout: BinaryIO = sys.stdout.buffer
    if fast_start:
        # The editor waits for the answer to ``initialize``, then for the first opened workflow's
        # diagnostics: both are given before pygls is loaded (~0.5 s).
        from .fast_start import start

        stdin, stdout = start(sys.stdin.fileno(), stdout)
    from .server import create_language_server

    if tracing.enabled():
        stdin = tracing.TracedStream(stdin)
    server = create_language_server()
    # What start-up loaded (pygls, lsprotocol's types and their converters) lives as long as the
    # process: the collector's full passes need not scan it again.
    gc.freeze()
    server.start_io(SizeLimitedStream(stdin), stdout)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
