"""Text for people: ``path:line:col: CODE message``, a code frame with carets, a summary line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import click

from workrail_engine.cli.formatters.base import Formatter
from workrail_engine.cli.formatters.codeframe import code_frame, printable, printable_path
from workrail_engine.diagnostics import Diagnostic, Related, Severity
from workrail_engine.lint.fixes import fixable
from workrail_engine.lint.report import FileReport, Summary

__all__ = ["TextFormatter", "fixable_line", "summary_line"]

COLORS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _and_join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def summary_line(summary: Summary) -> str:
    """ "Found 3 errors and 1 warning in 2 files (5 files checked)" or "All 5 files passed" ("1 file passed" for one);
    after ``--fix`` fixed some, "Found 4 problems (3 fixed, 1 remaining)" as ruff says it."""
    if summary.fixed:
        remaining = summary.errors + summary.warnings
        total = _plural(summary.fixed + remaining, "problem")
        return f"Found {total} ({summary.fixed} fixed, {remaining} remaining)"
    if summary.files_checked == 0:
        return "No workflow files found"
    if summary.errors == 0 and summary.warnings == 0:
        if summary.files_checked == 1:
            return "1 file passed"
        return f"All {summary.files_checked} files passed"
    counts = [
        _plural(n, w) for n, w in ((summary.errors, "error"), (summary.warnings, "warning")) if n
    ]
    where = _plural(summary.files_with_problems, "file")
    return (
        f"Found {_and_join(counts)} in {where} ({_plural(summary.files_checked, 'file')} checked)"
    )


def fixable_line(summary: Summary) -> str | None:
    """ruff's hint: "[*] 2 fixable with `--fix` (1 unsafe fix available with `--fix
    --unsafe-fixes`)."; "1 unsafe fix available with `--fix --unsafe-fixes`." without safe ones."""
    n = summary.unsafe_fixable
    unsafe = f"{n} unsafe fix{'' if n == 1 else 'es'} available with `--fix --unsafe-fixes`"
    if not summary.fixable:
        return f"{unsafe}." if n else None
    return f"[*] {summary.fixable} fixable with `--fix`" + (f" ({unsafe})." if n else ".")


class TextFormatter(Formatter):
    name = "text"

    def _style(self, text: str, **styles: object) -> str:
        return click.style(text, **styles) if self.color else text  # type: ignore[arg-type]

    def render(self, reports: Sequence[FileReport], summary: Summary) -> str:
        by_path = {r.path: r for r in reports}  # to place notes that point into other files
        unsafe = summary.unsafe_fixes
        blocks = [self._diagnostic(r, d, by_path, unsafe) for r in reports for d in r.diagnostics]
        if self.quiet:
            return "".join(block + "\n\n" for block in blocks)
        tail = summary_line(summary)
        if summary.failed:
            tail = self._style(tail, fg="red", bold=True)
        elif not (summary.errors or summary.warnings):
            tail = self._style(tail, fg="green")
        hint = fixable_line(summary)
        return (
            "".join(block + "\n\n" for block in blocks)
            + tail
            + "\n"
            + (hint + "\n" if hint else "")
        )

    def _diagnostic(
        self,
        report: FileReport,
        diagnostic: Diagnostic,
        by_path: Mapping[str, FileReport],
        unsafe: bool,
    ) -> str:
        loc = report.location(diagnostic)
        color = COLORS[diagnostic.severity]
        # ruff's mark: `--fix` fixes this one (an unsafe fix counts with --unsafe-fixes).
        mark = "[*] " if fixable(diagnostic, unsafe=unsafe) else ""
        head = (
            f"{self._style(f'{printable_path(report.path)}:{loc.line}:{loc.column}:', bold=True)} "
            f"{self._style(diagnostic.code, fg=color, bold=True)} {mark}"
            f"{printable(diagnostic.message)}"
        )
        lines = [head, *self._frame(report, diagnostic, color)]
        lines += [_note(by_path.get(r.path) if r.path else report, r) for r in diagnostic.related]
        lines += [f"  = help: {printable(fix.title)}" for fix in diagnostic.fixes]
        return "\n".join(lines)

    def _frame(self, report: FileReport, diagnostic: Diagnostic, color: str) -> list[str]:
        index = report.document.line_index
        line, start = index.position(diagnostic.span.start)
        end_line, end = index.position(diagnostic.span.end)
        text = index.line_text(line)
        if end_line != line:
            end = len(text)
        frame = code_frame(line + 1, text, start, end, label=diagnostic.severity.value)
        gutter = len(str(line + 1)) + 2
        frame[-1] = frame[-1][:gutter] + self._style(frame[-1][gutter:], fg=color)
        return [self._style(frame[0], fg="blue"), frame[1], frame[2]]


def _note(where: FileReport | None, related: Related) -> str:
    """``= note: message (path:line:col)``; just the path when that file was not checked."""
    if where is None:
        return f"  = note: {printable(related.message)} ({printable_path(related.path)})"
    line, col = where.document.line_index.position(related.span.start)
    return f"  = note: {printable(related.message)} ({printable_path(where.path)}:{line + 1}:{col + 1})"
