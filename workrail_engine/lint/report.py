"""What a check of many workflow files found: per-file reports, the totals, and their one JSON
shape — `workrail validate --format json` prints it, the language server's workspace validation
answers it.

The formatters only read these objects; they never lint, read files or decide the exit code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workrail_engine.diagnostics import Diagnostic, Severity, Span

from .fixes import fixable
from .rule_names import rule_name

if TYPE_CHECKING:
    from workrail_engine.compile import RoutineLookup
    from workrail_engine.lint.step_check_cache import StepsByContent
    from workrail_engine.text.document import WorkflowDocument


__all__ = [
    "FileReport",
    "Location",
    "Summary",
    "add_cross_file_diagnostics",
    "fix_json",
    "lint_files",
    "report_json",
]


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
    """Totals over every file checked; ``strict`` makes warnings fail the run.

    ``fixed``: diagnostics ``--fix`` removed before these reports were made; ``fixable`` and
    ``unsafe_fixable``: remaining diagnostics ``--fix`` (or only ``--unsafe-fixes``) would fix.
    """

    files_checked: int
    files_with_problems: int
    errors: int
    warnings: int
    infos: int
    strict: bool = False
    fixed: int = 0
    fixable: int = 0
    unsafe_fixable: int = 0
    unsafe_fixes: bool = False
    """``--unsafe-fixes`` was given: ``--fix`` applies unsafe fixes too."""

    @classmethod
    def of(
        cls,
        reports: list[FileReport],
        *,
        strict: bool = False,
        fixed: int = 0,
        unsafe_fixes: bool = False,
    ) -> Summary:
        """``unsafe_fixes``: unsafe fixes count as fixable (``--unsafe-fixes`` was given)."""
        errors = sum(r.count(Severity.ERROR) for r in reports)
        warnings = sum(r.count(Severity.WARNING) for r in reports)
        infos = sum(r.count(Severity.INFO) for r in reports)
        with_problems = sum(
            1 for r in reports if r.count(Severity.ERROR) or r.count(Severity.WARNING)
        )
        every = [d for r in reports for d in r.diagnostics]
        safe = sum(1 for d in every if fixable(d, unsafe=unsafe_fixes))
        unsafe = sum(1 for d in every if fixable(d, unsafe=True)) - safe
        return cls(
            len(reports),
            with_problems,
            errors,
            warnings,
            infos,
            strict,
            fixed,
            safe,
            unsafe,
            unsafe_fixes,
        )

    @property
    def failed(self) -> bool:
        return self.errors > 0 or (self.strict and self.warnings > 0)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def lint_files(
    paths: Sequence[str],
    catalog_ids: Callable[[], Iterable[str]] | None = tuple,
    catalog_routine: RoutineLookup | None = None,
    processes: int = 1,
) -> list[FileReport]:
    """Every check of each file, plus the cross-file checks (`add_cross_file_diagnostics`).

    ``processes``: how many processes share the per-file checks (`worker_processes`); the
    reports are the same for any number."""
    from .pipeline import lint_path
    from .step_check_cache import StepsByContent

    # Workflows copy steps from one another: each distinct step is checked once.
    steps_by_content = StepsByContent()
    processes = min(processes, len(paths))
    if processes > 1 and hasattr(os, "fork"):  # no fork (Windows): one process
        return _lint_in_processes(paths, processes, steps_by_content, catalog_ids, catalog_routine)
    # lint_path never raises: an engine bug on one file is a WR000 on that file (see lint_document).
    reports = [
        FileReport(path, result.document, list(result.diagnostics))
        for path, result in ((path, lint_path(path, steps_by_content)) for path in paths)
    ]
    add_cross_file_diagnostics(reports, catalog_ids, catalog_routine)
    return reports


def _lint_in_processes(
    paths: Sequence[str],
    processes: int,
    steps_by_content: StepsByContent,
    catalog_ids: Callable[[], Iterable[str]] | None,
    catalog_routine: RoutineLookup | None,
) -> list[FileReport]:
    """`lint_files` with the files shared by ``processes`` processes; the cross-file checks
    read the documents `cross_file.read_whole` picks, and the workflow ids of all."""
    from .cross_file import cross_file_diagnostics, read_whole
    from .worker_processes import lint_in_processes

    checked = lint_in_processes(paths, processes, steps_by_content)
    whole = read_whole([c.facts for c in checked])
    reports = [
        FileReport(c.path, c.report_document(w), c.diagnostics)
        for c, w in zip(checked, whole, strict=True)
    ]
    read = [r.document for r, w in zip(reports, whole, strict=True) if w]
    ids = [c.facts.workflow_id for c in checked if c.facts.workflow_id is not None]
    _add_diagnostics(reports, cross_file_diagnostics(read, ids, catalog_ids, catalog_routine))
    return reports


def add_cross_file_diagnostics(
    reports: Sequence[FileReport],
    catalog_ids: Callable[[], Iterable[str]] | None = None,
    catalog_routine: RoutineLookup | None = None,
) -> None:
    """WR603 where two of the files share a workflow id, WR710 where their delegations form a
    cycle and, given ``catalog_ids``, WR703 where a `templateCall` names a routine and WR709
    where a delegation names a workflow that is neither among the files nor in ``catalog_ids()``
    (asked only when the files alone do not answer: building a catalog reads every source).
    WR811 where a file would compile past the size limits, with the routines among the files,
    then ``catalog_routine``'s."""
    from .cross_file import cross_file_diagnostics, workflow_id

    documents = [r.document for r in reports]
    ids = [i for i in map(workflow_id, documents) if i is not None]
    _add_diagnostics(reports, cross_file_diagnostics(documents, ids, catalog_ids, catalog_routine))


def _add_diagnostics(
    reports: Sequence[FileReport], extras: Iterable[Mapping[str, list[Diagnostic]]]
) -> None:
    """Each of ``extras``' diagnostics (keyed by path) added to its file's report, in order."""
    for extra in extras:
        for report in reports:
            found = extra.get(report.document.path or "", [])
            if found:
                report.diagnostics = sorted(
                    [*report.diagnostics, *found], key=lambda d: d.sort_key()
                )


def fix_json(report: FileReport, diagnostic: Diagnostic) -> dict[str, Any] | None:
    """The fix ``--fix`` would apply (with ``--unsafe-fixes`` when it is unsafe), as ruff's JSON
    gives it: ``{applicability: safe|unsafe, message, edits: [{content, location: {row,
    column}, end_location}]}`` with 1-based rows and columns; None when there is none."""
    fix = fixable(diagnostic, unsafe=True)
    if fix is None:
        return None
    edits = []
    for edit in fix.edits:
        loc = report.locate(edit.span)
        edits.append(
            {
                "content": edit.new_text,
                "location": {"row": loc.line, "column": loc.column},
                "end_location": {"row": loc.end_line, "column": loc.end_column},
            }
        )
    return {
        "applicability": "safe" if fix.safe else "unsafe",
        "message": fix.title,
        "edits": edits,
    }


def _diagnostic_json(report: FileReport, diagnostic: Diagnostic) -> dict[str, Any]:
    loc = report.location(diagnostic)
    out = diagnostic.to_dict()
    out.update(line=loc.line, column=loc.column, endLine=loc.end_line, endColumn=loc.end_column)
    out.update(name=rule_name(diagnostic.code), fix=fix_json(report, diagnostic))
    return out


def report_json(reports: Sequence[FileReport], summary: Summary) -> dict[str, Any]:
    """``{summary: {filesChecked, filesWithProblems, errors, warnings, infos, passed, fixable,
    unsafeFixable}, files: [{path, diagnostics: [{code, name, severity, message, pointer, ...,
    line, column, endLine, endColumn, fix}]}]}`` with 1-based positions (``fix``: `fix_json`)."""
    return {
        "summary": {
            "filesChecked": summary.files_checked,
            "filesWithProblems": summary.files_with_problems,
            "errors": summary.errors,
            "warnings": summary.warnings,
            "infos": summary.infos,
            "passed": not summary.failed,
            "fixable": summary.fixable,
            "unsafeFixable": summary.unsafe_fixable,
        },
        "files": [
            {"path": r.path, "diagnostics": [_diagnostic_json(r, d) for d in r.diagnostics]}
            for r in reports
        ],
    }
