"""`workrail validate`: lint every file asked for, render the reports, return the exit code."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from workrail_engine.cli.console import Console
from workrail_engine.cli.discovery import PROJECT_SUBDIRS, collect_files, project_directories
from workrail_engine.lint.report import Summary, lint_files

__all__ = ["run_validate"]

WORKFLOW_FILE_RULE = (
    " (a directory's workflow files are those under a workflows/ directory, *.workflow.json|yaml|yml,"
    " and JSON/YAML whose $schema is WorkRail's; name other files explicitly)"
)


def _catalog_ids(project: Path, extra_dirs: Sequence[Path]) -> Callable[[], list[str]]:
    def ids() -> list[str]:
        from workrail_engine.catalog import Catalog

        return Catalog.default(project, extra_dirs).ids()

    return ids


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
