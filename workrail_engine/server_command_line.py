"""The servers' command lines (`workrail-mcp`, `workrail-lsp`, `workrail dashboard`) in click,
like `workrail` itself: one style of help, usage errors and exit codes across every command.

The servers keep their own entry points (`workrail mcp …` hands its arguments on unchanged), and
the language server imports this only for a command line an editor does not send (the editor
waits for its start-up). Not under ``workrail_engine.cli``: importing that package loads every
`workrail` command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import click

__all__ = ["HELP_SETTINGS", "parse_command_line"]

# The same as `workrail`'s: -h works too, and help wraps at 100 columns at most.
HELP_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def parse_command_line(
    command: click.Command, argv: Sequence[str] | None, prog_name: str
) -> SimpleNamespace:
    """The options of ``command`` (whose callback returns them as a namespace) read from ``argv``.

    ``--help`` and ``--version`` print and exit 0; a usage error prints click's usage lines and
    exits 2, as every `workrail` command does."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        parsed = command.main(args=args, prog_name=prog_name, standalone_mode=False)
    except click.ClickException as error:
        error.show()
        raise SystemExit(error.exit_code) from None
    if not isinstance(parsed, SimpleNamespace):  # --help or --version: printed already
        raise SystemExit(0)
    return parsed
