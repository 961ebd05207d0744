"""`workrail replay`: recorded sessions and runs of the workflows asked for, walked again against
the files as they are now; or their histories exported as fixtures (``--export``), or fixtures
replayed (``--from``). The engine does the work (`workrail_engine.replay`); this module picks
the files and the histories, and renders the reports with `workrail validate`'s formatters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workrail_engine.cli.console import Console
from workrail_engine.cli.discovery import collect_files, project_directories

if TYPE_CHECKING:
    from workrail_engine.catalog import Catalog
    from workrail_engine.replay import History, Replayed
    from workrail_engine.replay.report import ReplayTarget

__all__ = ["ReplayOptions", "ReplayUsageError", "run_replay"]


class ReplayUsageError(Exception):
    """Options or paths that cannot be replayed (exit 2): the message says what to do."""


@dataclass(frozen=True, slots=True)
class ReplayOptions:
    fmt: str = "text"
    quiet: bool = False
    fixtures: Path | None = None  # --from
    export: Path | None = None  # --export
    workflow_ids: tuple[str, ...] = ()  # --workflow
    store: Path | None = None  # --store


def run_replay(
    paths: Sequence[str],
    options: ReplayOptions,
    *,
    console: Console,
    project: Path,
    catalog: Catalog,
    extra_dirs: Sequence[Path] = (),
) -> int:
    """0 every history holds (or there is none), 1 one diverges (or a file cannot be replayed
    against). Raises `ReplayUsageError`, `discovery.MissingPath`, `fixtures.FixtureError`."""
    if options.export is not None and options.fixtures is not None:
        raise ReplayUsageError("--export writes the store's histories; it cannot read --from")
    arguments = list(paths) or [str(d) for d in project_directories(project, extra_dirs)]
    files = collect_files(arguments, sources=not paths) if arguments else []
    targets = [_target(path, catalog) for path in files]
    # which workflows' histories: --workflow's; else the files'; an export of no named files
    # takes every workflow's
    wanted: list[str] | None = list(options.workflow_ids) or [
        t.workflow_id for t in targets if t.workflow_id
    ]
    if options.export is not None:
        every = not paths and not options.workflow_ids
        return _export(targets, None if every else wanted, options, console, project)
    histories = _histories(wanted, options)
    from workrail_engine.replay.report import replay_reports

    reports, replays = replay_reports(targets, histories)
    _render(reports, replays, options, console)
    failed = any(d.is_error for r in reports for d in r.diagnostics)
    return 1 if failed else 0


def _target(path: str, catalog: Catalog) -> ReplayTarget:
    """The file as it is now: linted, then compiled as it is served (its problems otherwise)."""
    from workrail_engine.diagnostics import Diagnostic, Severity, Span
    from workrail_engine.errors import EngineError
    from workrail_engine.lint import lint_path
    from workrail_engine.replay.report import ReplayTarget

    linted = lint_path(path)
    errors = [d for d in linted.diagnostics if d.is_error]
    if errors or not isinstance(linted.document.value, dict):
        return ReplayTarget(path, linted.document, None, errors)
    try:
        definition = catalog.serve_file(linted.document.value)
    except EngineError as error:
        problems = [
            Diagnostic(
                str(p.get("code") or "WR000"),
                Severity.ERROR,
                str(p.get("message") or error.message),
                str(p.get("pointer") or ""),
                linted.document.value_span(str(p.get("pointer") or "")) or Span(0, 0),
            )
            for p in error.data.get("problems") or [{}]
        ]
        return ReplayTarget(path, linted.document, None, problems)
    return ReplayTarget(path, linted.document, definition)


def _histories(wanted: list[str] | None, options: ReplayOptions) -> list[History]:
    """The histories of the workflows ``wanted`` (None: of every workflow), from the fixtures
    or the store."""
    if options.fixtures is not None:
        from workrail_engine.replay.fixtures import load_histories

        found = load_histories(options.fixtures)
        return [h for h in found if wanted is None or h.workflow_id in wanted]
    from workrail_engine.replay.records import read_histories
    from workrail_engine.runs.history import RunHistory

    history = RunHistory(home=options.store)
    try:
        return read_histories(history, wanted)
    finally:
        history.close()


def _export(
    targets: Sequence[ReplayTarget],
    wanted: list[str] | None,
    options: ReplayOptions,
    console: Console,
    project: Path,
) -> int:
    from workrail_engine.answers.record import masks_of
    from workrail_engine.home import workrail_home
    from workrail_engine.replay.fixtures import export_histories, machine_paths

    assert options.export is not None
    histories = _histories(wanted, options)
    masks = {
        t.workflow_id: masks_of(t.definition)
        for t in targets
        if t.workflow_id and t.definition is not None
    }
    paths = machine_paths(project.resolve(), workrail_home(), options.store)
    written = export_histories(histories, options.export, masks, paths)
    if not options.quiet:
        console.err(f"exported {_plural(len(written), 'history', 'histories')} to {options.export}")
    return 0


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _render(
    reports: list[Any], replays: Sequence[Replayed], options: ReplayOptions, console: Console
) -> None:
    from workrail_engine.cli.formatters import formatter_class
    from workrail_engine.lint.report import Summary

    summary = Summary.of(reports)
    text = options.fmt == "text"
    formatter = formatter_class(options.fmt)(
        color=console.color,
        quiet=text or options.quiet,
        extra={"histories": [r.to_dict() for r in replays]},
    )
    output = formatter.render(reports, summary)
    if output:
        console.out(output, nl=False)
    if text and not options.quiet:
        console.out(summary_line(replays, len(reports)))


def summary_line(replays: Sequence[Replayed], files: int) -> str:
    """ "Replayed 3 histories of 2 workflow files: 2 hold, 1 diverges"."""
    if not replays:
        return f"No recorded histories of the {_plural(files, 'workflow file', 'workflow files')}"
    parted = sum(1 for r in replays if r.divergence is not None)
    held = len(replays) - parted
    return (
        f"Replayed {_plural(len(replays), 'history', 'histories')} of "
        f"{_plural(files, 'workflow file', 'workflow files')}: {held} hold"
        + (f", {parted} diverge{'s' if parted == 1 else ''}" if parted else "")
    )
