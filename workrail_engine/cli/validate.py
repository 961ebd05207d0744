"""`workrail validate`: lint every file asked for (or standard input), apply fixes when asked,
render the reports, return the exit code.

Which codes are reported comes from the project's configuration (``project_config``: the file
nearest each checked file) and then ``--select``/``--extend-select``/``--ignore``; ``strict`` and
extra workflow directories from the configuration nearest the project directory.
"""

from __future__ import annotations

import functools
import os
import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workrail_engine.cli.console import Console
from workrail_engine.cli.discovery import (
    PROJECT_SUBDIRS,
    collect_files,
    named_paths,
    project_directories,
)
from workrail_engine.cli.process_exit import keep_until_exit
from workrail_engine.cli.rewrite_scope import RewriteScope
from workrail_engine.cli.rewrites import (
    STDIN,
    Rewrite,
    read_source,
    read_stdin,
    unified_diff,
    write_rewrites,
)
from workrail_engine.cyclic_collection import cyclic_collection_paused
from workrail_engine.lint.report import FileReport, Summary, lint_files
from workrail_engine.project_config import ProjectConfig, RuleSelection, find_config

if TYPE_CHECKING:
    from workrail_engine.catalog import Catalog

__all__ = ["ValidateOptions", "run_validate"]

WORKFLOW_FILE_RULE = (
    " (a directory's workflow files are those under a workflows/ directory, *.workflow.json|yaml|yml,"
    " and JSON/YAML whose $schema is WorkRail's; name other files explicitly)"
)


@dataclass(frozen=True, slots=True)
class ValidateOptions:
    """The options of `workrail validate`, as plain values."""

    fmt: str = "text"
    strict: bool = False
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    quiet: bool = False
    exit_zero: bool = False
    statistics: bool = False
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    stdin_filename: str | None = None
    jobs: int | None = None
    """Processes checking the files (`--jobs`); None: as many as pay (`processes_for`)."""


class _Selections:
    """Each file's rule selection: its nearest configuration's, then the command line's."""

    def __init__(self, options: ValidateOptions) -> None:
        self.options = options
        self._configs: dict[Path, ProjectConfig] = {}
        self._selections: dict[str, RuleSelection] = {}  # asked twice per file: before, after
        self._parents: dict[str, Path] = {}  # a files' directory as spelled → resolved

    def config(self, path: str | Path) -> ProjectConfig:
        directory = self._directory(path)
        if directory not in self._configs:
            self._configs[directory] = find_config(directory)
        return self._configs[directory]

    def _directory(self, path: str | Path) -> Path:
        """The resolved directory whose configuration applies to ``path``: the path itself when
        it is a directory, else the parent of the file it resolves to."""
        try:
            plain_file = stat.S_ISREG(os.lstat(path).st_mode)  # no directory, no symbolic link
        except OSError:
            plain_file = False
        if not plain_file:
            directory = Path(path).resolve()
            return directory if directory.is_dir() else directory.parent
        # Its parent resolved, once per directory: resolving each of 1,000 files' paths anew
        # was 5 % of `workrail validate`'s time on them.
        parent = os.path.dirname(path) or "."
        if parent not in self._parents:
            self._parents[parent] = Path(parent).resolve()
        return self._parents[parent]

    def for_path(self, path: str) -> RuleSelection:
        if path not in self._selections:
            o = self.options
            selection = self.config(path).selection_for(path)
            self._selections[path] = selection.then(o.select, o.extend_select, o.ignore)
        return self._selections[path]


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


def _fix_file(path: str, selection: RuleSelection, options: ValidateOptions) -> tuple[Rewrite, int]:
    from workrail_engine.lint.fixes import fix_text

    source = read_source(path)
    if source is None:  # unreadable: the report below says why
        return Rewrite(path, "", None), 0
    outcome = fix_text(
        source.text, path, unsafe=options.unsafe_fixes, enabled=lambda d: selection.enabled(d.code)
    )
    return Rewrite(path, source.text, outcome.text, source.identity), outcome.fixed_count


def _statistics(reports: Sequence[FileReport], summary: Summary, options: ValidateOptions) -> str:
    """ruff's table: one line per code, most frequent first (then by code): count, code, ``[*]``
    when ``--fix`` fixes some of them (``[ ]`` otherwise), the rule's name; then, unless quiet,
    the summary lines. JSON: ``[{code, name, count, fixable, fixable_count, severity}]``."""
    import json

    from workrail_engine.cli.formatters.text import fixable_line, summary_line
    from workrail_engine.lint.fixes import fixable
    from workrail_engine.lint.rule_names import rule_name

    counts: Counter[str] = Counter()
    fixes: Counter[str] = Counter()
    severity: dict[str, str] = {}
    for report in reports:
        for d in report.diagnostics:
            counts[d.code] += 1
            fixes[d.code] += fixable(d, unsafe=options.unsafe_fixes) is not None
            severity[d.code] = d.severity.value
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if options.fmt == "json":
        table = [
            {
                "code": c,
                "name": rule_name(c),
                "count": n,
                "fixable": fixes[c] > 0,
                "fixable_count": fixes[c],
                "severity": severity[c],
            }
            for c, n in rows
        ]
        return json.dumps(table, indent=2)
    width = len(str(rows[0][1])) if rows else 1
    lines = [f"{n:>{width}}\t{c}\t{'[*]' if fixes[c] else '[ ]'} {rule_name(c)}" for c, n in rows]
    if not options.quiet:
        hint = fixable_line(summary)
        lines += [summary_line(summary), *([hint] if hint else [])]
    return "\n".join(lines)


def _render(
    reports: list[FileReport],
    summary: Summary,
    options: ValidateOptions,
    console: Console,
    to_stderr: bool = False,
) -> None:
    from workrail_engine.cli.formatters import formatter_class

    if options.statistics:
        output = _statistics(reports, summary, options)
        output = output + "\n" if output else ""
    else:
        formatter = formatter_class(options.fmt)(color=console.color, quiet=options.quiet)
        output = formatter.render(reports, summary)
    if output and to_stderr:
        console.err(output.rstrip("\n"))
    elif output:
        console.out(output, nl=False)


def _processes(file_count: int, options: ValidateOptions) -> int:
    from workrail_engine.cli.jobs import processes_for

    return options.jobs if options.jobs is not None else processes_for(file_count)


def _exit_code(summary: Summary, options: ValidateOptions) -> int:
    return 0 if options.exit_zero else summary.exit_code


def _filter(reports: list[FileReport], selections: _Selections) -> None:
    for report in reports:
        selection = selections.for_path(report.path)
        report.diagnostics = [d for d in report.diagnostics if selection.enabled(d.code)]


def _run_stdin(
    options: ValidateOptions,
    console: Console,
    selections: _Selections,
    catalog: _LazyCatalog,
    strict: bool,
) -> int:
    from workrail_engine.lint import lint_document
    from workrail_engine.lint.fixes import fix_text
    from workrail_engine.lint.report import add_cross_file_diagnostics
    from workrail_engine.text.document import UnreadableText, parse_document

    name = options.stdin_filename or STDIN
    path = options.stdin_filename
    selection = selections.for_path(name if path else ".")
    fixed = 0
    try:
        text = read_stdin()
    except UnreadableText as refused:  # the diagnostic the same bytes in a file would get
        document = refused.document(path)
    else:
        if options.fix or options.diff:
            outcome = fix_text(
                text, path, unsafe=options.unsafe_fixes, enabled=lambda d: selection.enabled(d.code)
            )
            rewrite, fixed = Rewrite(name, text, outcome.text), outcome.fixed_count
            if options.diff:
                return _show_diffs([rewrite], fixed, options, console)
            # ruff's habit: the fixed text on stdout, the report on stderr.
            console.out(outcome.text, nl=False)
            text = outcome.text
        document = parse_document(text, path)
    report = FileReport(name, document, lint_document(document))
    add_cross_file_diagnostics([report], catalog.ids, catalog.routine)
    report.diagnostics = [d for d in report.diagnostics if selection.enabled(d.code)]
    summary = Summary.of([report], strict=strict, fixed=fixed, unsafe_fixes=options.unsafe_fixes)
    # Standard output holds the fixed text (--fix) or the diff (--diff): the report goes to stderr.
    _render([report], summary, options, console, to_stderr=options.fix or options.diff)
    return _exit_code(summary, options)


def _show_diffs(
    rewrites: Sequence[Rewrite], fixed: int, options: ValidateOptions, console: Console
) -> int:
    """``--diff``: the fixes as unified diffs on stdout, "Would fix N problems." on stderr."""
    diffs = "".join(unified_diff(r) for r in rewrites)
    if diffs:
        console.out(diffs, nl=False)
    if not options.quiet:
        noun = "problem" if fixed == 1 else "problems"
        console.err(f"Would fix {fixed} {noun}." if fixed else "No problems would be fixed.")
    return 1 if diffs and not options.exit_zero else 0


def run_validate(
    paths: Sequence[str],
    options: ValidateOptions,
    *,
    console: Console,
    project: Path,
    extra_dirs: Sequence[Path] = (),
) -> int:
    """Check ``paths`` (or the project's workflow directories); 0 clean, 1 problems.

    Paths that do not exist raise :class:`~workrail_engine.cli.discovery.MissingPath`, and a bad
    configuration :class:`~workrail_engine.project_config.ConfigError`, which the command line
    turns into usage errors (exit 2) before any file is read or written.
    """
    # Every document checked stays alive until the report is written, then until the process
    # ends (`keep_until_exit`): the collector's passes would walk them all again and again, and
    # once more after the command (see `cyclic_collection_paused`).
    with cyclic_collection_paused(freeze_after=True):
        return _validate(paths, options, console=console, project=project, extra_dirs=extra_dirs)


def _validate(
    paths: Sequence[str],
    options: ValidateOptions,
    *,
    console: Console,
    project: Path,
    extra_dirs: Sequence[Path],
) -> int:
    selections = _Selections(options)
    project_config = selections.config(project)
    strict = options.strict or project_config.strict
    named_dirs = list(extra_dirs)
    extra_dirs = [*extra_dirs, *project_config.workflow_dirs]
    catalog = _LazyCatalog(project, extra_dirs)
    if list(paths) == [STDIN] or (not paths and options.stdin_filename):  # as ruff reads it
        return _run_stdin(options, console, selections, catalog, strict)
    notes = _Silent() if options.quiet else console
    arguments = list(paths) or _default_paths(project, extra_dirs, notes)
    if arguments is None:
        return 0
    files = collect_files(arguments, sources=not paths)
    if not files:
        notes.warning("no workflow files found in " + ", ".join(arguments) + WORKFLOW_FILE_RULE)
    for path in files:  # configuration errors first: nothing is written under a bad one
        selections.for_path(path)
    fixed = 0
    if options.fix or options.diff:
        done = [_fix_file(path, selections.for_path(path), options) for path in files]
        fixed = sum(count for _, count in done)
        if options.diff:
            return _show_diffs([rewrite for rewrite, _ in done], fixed, options, console)
        # A file left unwritten keeps its problems: they are reported below, and the exit code
        # follows them as without --fix.
        scope = RewriteScope(project, [*named_paths(paths), *named_dirs])
        rewrites = [rewrite for rewrite, _ in done]
        left = {r.path for r in write_rewrites(rewrites, scope, console.warning, "fixing")}
        fixed = sum(count for rewrite, count in done if rewrite.path not in left)
    reports = lint_files(files, catalog.ids, catalog.routine, _processes(len(files), options))
    _filter(reports, selections)
    summary = Summary.of(reports, strict=strict, fixed=fixed, unsafe_fixes=options.unsafe_fixes)
    _render(reports, summary, options, console)
    keep_until_exit(reports)  # freed by the end of the process, not object by object
    return _exit_code(summary, options)


class _Silent(Console):
    """``--quiet``: no warnings about the run either."""

    def err(self, text: str) -> None:
        pass
