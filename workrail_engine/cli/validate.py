"""`workrail validate`: lint every file asked for, render the reports, return the exit code."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from workrail_engine.cli.console import Console
from workrail_engine.cli.discovery import PROJECT_SUBDIRS, collect_files, project_directories
from workrail_engine.cli.report import FileReport, Summary

__all__ = ["lint_files", "run_validate"]

WORKFLOW_FILE_RULE = (
    " (a directory's workflow files are those under a workflows/ directory, *.workflow.json|yaml|yml,"
    " and JSON/YAML whose $schema is WorkRail's; name other files explicitly)"
)


def lint_files(
    paths: Sequence[str], catalog_ids: Callable[[], Iterable[str]] = tuple
) -> list[FileReport]:
    """Every check of each file, plus the cross-file checks: WR603 where two of the files checked
    share a workflow id (as the language server does over a workspace), and WR703 where a
    `templateCall` names a routine that is neither among the files nor in ``catalog_ids()``
    (asked only when the files alone do not answer: building a catalog reads every source)."""
    from workrail_engine.lint import (
        duplicate_workflow_ids,
        lint_path,
    )  # imported only when there is work
    from workrail_engine.lint.upstream import template_call_diagnostics

    reports = [_lint_one(lint_path, path) for path in paths]
    documents = [r.document for r in reports]
    own_ids = {
        d.value["id"]
        for d in documents
        if isinstance(d.value, dict) and isinstance(d.value.get("id"), str)
    }
    missing_routines = template_call_diagnostics(documents, own_ids)
    if missing_routines:
        missing_routines = template_call_diagnostics(documents, own_ids | set(catalog_ids()))
    for extra in (duplicate_workflow_ids(documents), missing_routines):
        for report in reports:
            found = extra.get(report.document.path or "", [])
            if found:
                report.diagnostics = sorted(
                    [*report.diagnostics, *found], key=lambda d: d.sort_key()
                )
    return reports


def _catalog_ids(project: Path, extra_dirs: Sequence[Path]) -> Callable[[], list[str]]:
    def ids() -> list[str]:
        from workrail_engine.catalog import Catalog

        return Catalog.default(project, extra_dirs).ids()

    return ids


def _lint_one(lint_path: Callable[[str], Any], path: str) -> FileReport:
    # lint_path never raises: an engine bug on one file is a WR000 on that file (see lint_document).
    result = lint_path(path)
    return FileReport(path, result.document, list(result.diagnostics))


def _default_paths(project: Path, extra_dirs: Sequence[Path], console: Console) -> list[str] | None:
    directories = project_directories(project, extra_dirs)
    if not directories:
        looked = " and ".join(str(project / sub) for sub in PROJECT_SUBDIRS)
        console.warning(
            f"no workflow directory found (looked in {looked}); pass files or directories to check"
        )
        return None
    return [str(d) for d in directories]


def run_validate(
    paths: Sequence[str],
    *,
    fmt: str,
    strict: bool,
    console: Console,
    project: Path,
    extra_dirs: Sequence[Path] = (),
) -> int:
    """Check ``paths`` (or the project's workflow directories); 0 clean, 1 problems.

    Paths that do not exist raise :class:`~workrail_engine.cli.discovery.MissingPath`, which
    the command line turns into a usage error (exit 2) before any file is read.
    """
    from workrail_engine.cli.formatters import formatter_class

    arguments = list(paths) or _default_paths(project, extra_dirs, console)
    if arguments is None:
        return 0
    files = collect_files(arguments, sources=not paths)
    if not files:
        console.warning("no workflow files found in " + ", ".join(arguments) + WORKFLOW_FILE_RULE)
    reports = lint_files(files, _catalog_ids(project, extra_dirs))
    summary = Summary.of(reports, strict=strict)
    formatter = formatter_class(fmt)(color=console.color)
    output = formatter.render(reports, summary)
    if output:
        console.out(output, nl=False)
    return summary.exit_code
