"""The options of a command that serves a catalog over the web host: `workrail-mcp` and
`workrail dashboard` share them.

Read before anything is served, so this module imports click alone: `--help` and a usage error
answer without uvicorn and the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

__all__ = ["BODY_TIMEOUT_SECONDS", "HEADER_TIMEOUT_SECONDS", "shared_server_options"]

F = TypeVar("F", bound=Callable[..., object])

# A request's headers must arrive within this many seconds of the server waiting for them,
# and its body within BODY_TIMEOUT_SECONDS of its headers (a 4 MiB body at 150 KB/s). Defaults
# of options, hence here; `listener.RequestDeadlineProtocol` applies them.
HEADER_TIMEOUT_SECONDS = 10.0
BODY_TIMEOUT_SECONDS = 30.0
_SECONDS = click.FloatRange(min=0, min_open=True)


def shared_server_options(command: F) -> F:
    """``--workflows DIR`` (repeatable), ``--allowed-host NAME``, ``--allowed-origin ORIGIN``,
    ``--header-timeout SECONDS``, ``--body-timeout SECONDS``."""
    for option in reversed(
        [
            click.option(
                "--workflows",
                metavar="DIR",
                multiple=True,
                type=click.Path(path_type=Path),
                help="An extra workflow directory (repeatable).",
            ),
            click.option(
                "--allowed-host",
                metavar="NAME",
                multiple=True,
                help="Another Host name clients may use (DNS-rebinding protection).",
            ),
            click.option(
                "--allowed-origin",
                metavar="ORIGIN",
                multiple=True,
                help="Another browser Origin (scheme://host:port) allowed to call this server; "
                "by default only the server's own.",
            ),
            click.option(
                "--header-timeout",
                metavar="SECONDS",
                type=_SECONDS,
                default=HEADER_TIMEOUT_SECONDS,
                show_default=True,
                help="Close an HTTP connection whose request headers have not all arrived this "
                "long after the server began to wait for them (slow clients, slowloris).",
            ),
            click.option(
                "--body-timeout",
                metavar="SECONDS",
                type=_SECONDS,
                default=BODY_TIMEOUT_SECONDS,
                show_default=True,
                help="Close an HTTP connection whose request body has not all arrived this "
                "long after its headers.",
            ),
        ]
    ):
        command = option(command)
    return command
