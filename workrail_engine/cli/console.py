"""Where the CLI writes, and whether it may use colour.

Colour only when the stream is a terminal, never when ``NO_COLOR`` is set to anything non-empty
(https://no-color.org) or ``TERM=dumb``; ``--color always|never`` overrides both.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TextIO

import click

__all__ = ["Console", "wants_color"]


def wants_color(choice: str = "auto", stream: TextIO | None = None) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    stream = stream if stream is not None else sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@dataclass(frozen=True, slots=True)
class Console:
    """stdout for results, stderr for messages about the run; ``color`` applies to both."""

    color: bool = False

    @classmethod
    def detect(cls, choice: str = "auto") -> Console:
        return cls(wants_color(choice, sys.stdout))

    def out(self, text: str = "", *, nl: bool = True) -> None:
        click.echo(text, nl=nl, color=self.color)

    def err(self, text: str) -> None:
        click.echo(text, err=True, color=self.color)

    def error(self, message: str) -> None:
        prefix = click.style("error:", fg="red", bold=True) if self.color else "error:"
        self.err(f"{prefix} {message}")

    def warning(self, message: str) -> None:
        prefix = click.style("warning:", fg="yellow", bold=True) if self.color else "warning:"
        self.err(f"{prefix} {message}")
