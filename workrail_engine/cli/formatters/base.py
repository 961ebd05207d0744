"""The one interface every output format implements."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # `workrail --help` must not load the linter
    from workrail_engine.lint.report import FileReport, Summary

__all__ = ["Formatter"]


class Formatter(abc.ABC):
    """Turns the reports of one run into the text written to stdout.

    ``color`` is decided by the caller (terminal, ``NO_COLOR``, ``--color``); ``quiet``
    (``--quiet``) leaves out everything but the diagnostics. Machine formats ignore both.
    ``extra``: more top-level fields for the formats that carry them (json: `workrail replay`'s
    histories beside the diagnostics).
    """

    name: ClassVar[str]

    def __init__(
        self, *, color: bool = False, quiet: bool = False, extra: Mapping[str, Any] | None = None
    ) -> None:
        self.color = color
        self.quiet = quiet
        self.extra = dict(extra or {})

    @abc.abstractmethod
    def render(self, reports: Sequence[FileReport], summary: Summary) -> str:
        """The whole output, ending with a newline (or empty when there is nothing to say)."""
