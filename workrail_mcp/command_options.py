"""The options `workrail-mcp` and `workrail dashboard` share: both serve a catalog over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

__all__ = ["shared_server_options"]

F = TypeVar("F", bound=Callable[..., object])


def shared_server_options(command: F) -> F:
    """``--workflows DIR`` (repeatable), ``--allowed-host NAME``, ``--allowed-origin ORIGIN``."""
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
        ]
    ):
        command = option(command)
    return command
