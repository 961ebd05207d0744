"""GitHub Actions workflow commands: one ``::error``/``::warning`` annotation per diagnostic.

Format: ``::error file=…,line=…,col=…,endLine=…,endColumn=…,title=CODE::message``; the escaping
follows the runner's rules (``%``, CR and LF everywhere; also ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from collections.abc import Sequence

from workrail_engine.cli.formatters.base import Formatter
from workrail_engine.diagnostics import Severity
from workrail_engine.lint.report import FileReport, Summary

__all__ = ["GithubFormatter"]

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubFormatter(Formatter):
    name = "github"

    def render(self, reports: Sequence[FileReport], summary: Summary) -> str:
        lines = []
        for report in reports:
            for d in report.diagnostics:
                loc = report.location(d)
                props = (
                    f"file={escape_property(report.path)},line={loc.line},col={loc.column},"
                    f"endLine={loc.end_line},endColumn={loc.end_column},title={escape_property(d.code)}"
                )
                lines.append(f"::{COMMANDS[d.severity]} {props}::{escape_data(d.message)}\n")
        return "".join(lines)
