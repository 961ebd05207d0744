"""What one `workrail validate` run found: per-file reports and the totals the exit code uses.

The formatters only read these objects; they never lint, read files or decide the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workrail_engine.diagnostics import Diagnostic, Severity, Span

if TYPE_CHECKING:
    from workrail_engine.document import WorkflowDocument

__all__ = ["FileReport", "Location", "Summary"]


@dataclass(frozen=True, slots=True)
class Location:
    """1-based line and column (code points) of a span; the end is exclusive, as in SARIF."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(slots=True)
class FileReport:
    """The diagnostics of one file, with the document they point into."""

    path: str
    document: WorkflowDocument
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def location(self, diagnostic: Diagnostic) -> Location:
        return self.locate(diagnostic.span)

    def locate(self, span: Span) -> Location:
        index = self.document.line_index
        start_line, start_col = index.position(span.start)
        end_line, end_col = index.position(span.end)
        return Location(start_line + 1, start_col + 1, end_line + 1, end_col + 1)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)


@dataclass(frozen=True, slots=True)
class Summary:
    """Totals over every file checked; ``strict`` makes warnings fail the run."""

    files_checked: int
    files_with_problems: int
    errors: int
    warnings: int
    infos: int
    strict: bool = False

    @classmethod
    def of(cls, reports: list[FileReport], *, strict: bool = False) -> Summary:
        errors = sum(r.count(Severity.ERROR) for r in reports)
        warnings = sum(r.count(Severity.WARNING) for r in reports)
        infos = sum(r.count(Severity.INFO) for r in reports)
        with_problems = sum(
            1 for r in reports if r.count(Severity.ERROR) or r.count(Severity.WARNING)
        )
        return cls(len(reports), with_problems, errors, warnings, infos, strict)

    @property
    def failed(self) -> bool:
        return self.errors > 0 or (self.strict and self.warnings > 0)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0
