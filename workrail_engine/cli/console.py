"""Where the CLI writes, and whether it may use colour.

Colour only when the stream is a terminal, never when ``NO_COLOR`` is set to anything non-empty
(https://no-color.org) or ``TERM=dumb``; ``--color always|never`` overrides both.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import TextIO

import click

from workrail_engine.text.syntax_problems import has_raw_surrogate

__all__ = ["Console", "encodable", "wants_color"]

# Lone surrogates reach strings from JSON escapes ("\ud800") and from file names that are not
# UTF-8 (os.fsdecode's surrogateescape); no encoder writes them, so they become U+FFFD.
_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    # Tested in C first: the pattern's search tests each character of a report (~0.5 MB for
    # 1,000 files) against its class, and nearly every text holds no surrogate.
    return _SURROGATE.sub("\ufffd", text) if has_raw_surrogate(text) else text


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
    """stdout for results, stderr for messages about the run, each coloured only if it may be."""

    color: bool = False
    err_color: bool = False

    @classmethod
    def detect(cls, choice: str = "auto") -> Console:
        return cls(wants_color(choice, sys.stdout), wants_color(choice, sys.stderr))

    def out(self, text: str = "", *, nl: bool = True) -> None:
        click.echo(encodable(text), nl=nl, color=self.color)

    def err(self, text: str) -> None:
        click.echo(encodable(text), err=True, color=self.err_color)

    def _prefixed(self, label: str, colour: str, message: str) -> None:
        prefix = click.style(f"{label}:", fg=colour, bold=True) if self.err_color else f"{label}:"
        self.err(f"{prefix} {message}")

    def error(self, message: str) -> None:
        self._prefixed("error", "red", message)

    def warning(self, message: str) -> None:
        self._prefixed("warning", "yellow", message)
