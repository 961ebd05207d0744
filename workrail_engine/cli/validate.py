"""`workrail validate`: lint every file asked for, render the reports, return the exit code."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workrail_engine.cli.console import Console
from workrail_engine.cli.discovery import PROJECT_SUBDIRS, collect_files, project_directories
from workrail_engine.lint.report import Summary, lint_files

if TYPE_CHECKING:
    from workrail_engine.catalog import Catalog

__all__ = ["run_validate"]

WORKFLOW_FILE_RULE = (
    " (a directory's workflow files are those under a workflows/ directory, *.workflow.json|yaml|yml,"
    " and JSON/YAML whose $schema is WorkRail's; name other files explicitly)"
)


class _LazyCatalog:
    """The catalog, built only if a file checked needs it (building one reads every source)."""

    def __init__(self, project: Path, extra_dirs: Sequence[Path]) -> None:
        self._project, self._extra_dirs = project, extra_dirs

    @functools.cached_property
    def _catalog(self) -> Catalog:
        from workrail_engine.catalog import Catalog

        return Catalog.default(self._project, self._extra_dirs)

    def ids(self) -> list[str]:
        return self._catalog.ids()

    def routine(self, workflow_id: str) -> dict[str, Any] | None:
        self._catalog.refresh()
        return self._catalog.routine(workflow_id)


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
    catalog = _LazyCatalog(project, extra_dirs)
    reports = lint_files(files, catalog.ids, catalog.routine)
    summary = Summary.of(reports, strict=strict)
    formatter = formatter_class(fmt)(color=console.color)
    output = formatter.render(reports, summary)
    if output:
        console.out(output, nl=False)
    return summary.exit_code
