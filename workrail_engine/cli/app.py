"""The `workrail` command line: click parsing only.

Each command turns its options into plain values and calls one small execution function that
returns the exit code (``validate.run_validate``, ``browse.run_list``, …). Those functions, and the
engine behind them, are imported inside the commands so that `workrail --help` and the pre-commit
hook start fast. Anticipated engine failures (``EngineError``) become ``error: …`` on stderr and
exit 1 here, in one place; usage errors are click's, exit 2.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from workrail_engine import __version__
from workrail_engine.cli import runs
from workrail_engine.cli.console import Console
from workrail_engine.cli.formatters import FORMATS
from workrail_engine.cli.jobs import MAX_PROCESSES, MIN_FILES_FOR_PROCESSES
from workrail_engine.cli.process_exit import exit_without_teardown
from workrail_engine.cli.settings import Settings

if TYPE_CHECKING:
    from workrail_engine.errors import EngineError

__all__ = ["cli", "main"]

EXISTING_DIRECTORY = click.Path(exists=True, file_okay=False, path_type=Path)


class WorkrailGroup(click.Group):
    """A group that reports the engine's anticipated errors without a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        from workrail_engine.errors import EngineError

        try:
            return super().invoke(ctx)
        except EngineError as exc:
            Console.detect().error(_error_text(exc))
            ctx.exit(1)


def _error_text(exc: EngineError) -> str:
    closest = exc.data.get("closest") or []
    if closest and not all(name in exc.message for name in closest):
        return f"{exc.message} (closest: {', '.join(closest)})"
    return exc.message


def _finish(code: int) -> None:
    click.get_current_context().exit(code)


PROJECT_HELP = (
    "Project directory (default: the working directory); its ./workflows and "
    "./.workrail/workflows are workflow sources."
)
WORKFLOWS_HELP = "Another directory of workflows (repeatable; wins over the other sources)."


def _set_project(ctx: click.Context, _: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.obj = replace(ctx.obj, project=value)


def _add_workflow_dirs(ctx: click.Context, _: click.Parameter, value: tuple[Path, ...]) -> None:
    if value:
        ctx.obj = replace(ctx.obj, workflow_dirs=(*ctx.obj.workflow_dirs, *value))


def catalog_options(command: Any) -> Any:
    """The global --project and --workflows, accepted after the command too (`workrail list --project .`).

    Given here, --project replaces the global one and --workflows adds to the global ones.
    """
    command = click.option(
        "--workflows",
        type=EXISTING_DIRECTORY,
        multiple=True,
        metavar="DIR",
        help=WORKFLOWS_HELP,
        expose_value=False,
        callback=_add_workflow_dirs,
    )(command)
    return click.option(
        "--project",
        type=EXISTING_DIRECTORY,
        metavar="DIR",
        help=PROJECT_HELP,
        expose_value=False,
        callback=_set_project,
    )(command)


@click.group(cls=WorkrailGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="workrail")
@click.option(
    "--project", type=EXISTING_DIRECTORY, default=Path(), metavar="DIR", help=PROJECT_HELP
)
@click.option(
    "--workflows",
    "workflow_dirs",
    type=EXISTING_DIRECTORY,
    multiple=True,
    metavar="DIR",
    help=WORKFLOWS_HELP,
)
@click.pass_context
def cli(ctx: click.Context, project: Path, workflow_dirs: tuple[Path, ...]) -> None:
    """WorkRail: workflows that keep AI coding agents on the rails."""
    ctx.obj = Settings(project, workflow_dirs)


def _selectors(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> Any:
    """``--select WR1,WR601 --select WR7`` → ("WR1", "WR601", "WR7"); None when not given."""
    from workrail_engine.project_config import ConfigError, parse_selectors

    if not value:
        return None if param.name == "select" else ()
    try:
        return parse_selectors(value, f"--{(param.name or '').replace('_', '-')}")
    except ConfigError as exc:
        raise click.BadParameter(str(exc).split(": ", 1)[1]) from None


SELECTOR_OPTION: dict[str, Any] = {"multiple": True, "metavar": "CODES", "callback": _selectors}
STDIN_FILENAME_HELP = (
    "Read standard input (as PATHS '-'), reported under this name; its suffix "
    "(.json/.yaml/.yml) says the file type, its directory where configuration is found."
)


def _run_rewriting(
    run: Any, paths: tuple[str, ...], options: Any, settings: Settings, color: str
) -> None:
    """Run `validate` or `format`; paths that do not exist and bad configuration are usage errors."""
    from workrail_engine.cli.discovery import MissingPath
    from workrail_engine.project_config import ConfigError

    if "-" in paths and len(paths) > 1:
        raise click.BadParameter(
            "'-' (standard input) cannot be mixed with paths", param_hint="PATHS"
        )
    try:
        code = run(
            paths,
            options,
            console=Console.detect(color),
            project=settings.project,
            extra_dirs=settings.workflow_dirs,
        )
    except MissingPath as exc:
        raise click.BadParameter(str(exc), param_hint="PATHS") from None
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    _finish(code)


COLOR_OPTION = click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the text output (auto: only on a terminal, never with NO_COLOR set).",
)


FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format: text for people, json/sarif/github for machines.",
)


@cli.command()
@click.argument("paths", nargs=-1, metavar="[PATHS]...")
@FORMAT_OPTION
@click.option("--strict", is_flag=True, help="Warnings fail the run too (exit 1).")
@click.option(
    "--fix", is_flag=True, help="Apply the safe fixes in place (as the editor's quick fixes)."
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix or --diff, apply unsafe fixes too (guesses: closest names, placeholders).",
)
@click.option(
    "--diff",
    is_flag=True,
    help="Print the fixes as a unified diff instead of writing them (exit 1 if any).",
)
@click.option(
    "--select",
    **SELECTOR_OPTION,
    help="Report only these codes or prefixes (comma-separated, repeatable); replaces the configured select.",
)
@click.option("--extend-select", **SELECTOR_OPTION, help="Report these codes or prefixes too.")
@click.option("--ignore", **SELECTOR_OPTION, help="Never report these codes or prefixes.")
@click.option("-q", "--quiet", is_flag=True, help="Print the diagnostics and nothing else.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when problems are found.")
@click.option(
    "--statistics", is_flag=True, help="Print how many diagnostics of each code, instead of them."
)
@click.option("--stdin-filename", metavar="PATH", help=STDIN_FILENAME_HELP)
@click.option(
    "--jobs",
    type=click.IntRange(min=1, max=MAX_PROCESSES),
    metavar="N",
    help=(
        f"Processes checking the files, at most {MAX_PROCESSES} (default: one per usable CPU "
        f"for {MIN_FILES_FOR_PROCESSES} files or more, else 1)."
    ),
)
@COLOR_OPTION
@catalog_options
@click.pass_obj
def validate(settings: Settings, /, paths: tuple[str, ...], color: str, **options: Any) -> None:
    """Check and fix workflow files (schema and semantic checks).

    PATHS are files (always checked), glob patterns or directories, searched for workflow files:
    those under a workflows/ directory, *.workflow.json|yaml|yml, and JSON/YAML whose $schema is
    WorkRail's. '-' reads standard input. Without PATHS, every JSON/YAML file of the project's
    ./workflows and ./.workrail/workflows (and the configured workflow-dirs). Settings come from
    [tool.workrail] in pyproject.toml or .workrail/config.toml. Exit status: 0 clean (or
    warnings only), 1 problems found, 2 usage error.
    """
    from workrail_engine.cli.validate import ValidateOptions, run_validate

    _run_rewriting(run_validate, paths, ValidateOptions(**options), settings, color)


@cli.command(short_help="Replay recorded sessions and runs against the workflows now.")
@click.argument("paths", nargs=-1, metavar="[PATHS]...")
@FORMAT_OPTION
@click.option(
    "--from",
    "fixtures",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Replay the histories exported to DIR instead of the run store's.",
)
@click.option(
    "--export",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Write the recorded histories to DIR as JSON fixtures (secrets masked); replay nothing.",
)
@click.option(
    "--workflow",
    "workflow_ids",
    multiple=True,
    metavar="ID",
    help="Only the histories of this workflow (repeatable).",
)
@click.option(
    "--store",
    type=EXISTING_DIRECTORY,
    metavar="DIR",
    help="The run store's directory (default: runs/ in WORKRAIL_HOME, or WORKRAIL_DATABASE_URL).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print the divergences and nothing else.")
@COLOR_OPTION
@catalog_options
@click.pass_obj
def replay(settings: Settings, /, paths: tuple[str, ...], color: str, **options: Any) -> None:
    """Walk recorded sessions and runs again against the workflow files as they are now.

    The histories of the workflows in PATHS (as for validate; default: the project's workflow
    directories) are read from the run store, or from fixtures (--from); each is walked with its
    recorded context and answers. Nothing is executed: no command, no model, no person. For each
    history, the first divergence — another step served, a recorded answer the checks would now
    block, a step gone or renamed, a loop that stops sooner or later — at the file position of
    the construct that causes it. Exit status: 0 every history holds, 1 one diverges, 2 usage
    error.
    """
    from workrail_engine.cli.discovery import MissingPath
    from workrail_engine.cli.replay import ReplayOptions, ReplayUsageError, run_replay
    from workrail_engine.replay.fixtures import FixtureError

    try:
        code = run_replay(
            paths,
            ReplayOptions(**options),
            console=Console.detect(color),
            project=settings.project,
            catalog=settings.catalog(),
            extra_dirs=settings.workflow_dirs,
        )
    except MissingPath as exc:
        raise click.BadParameter(str(exc), param_hint="PATHS") from None
    except (ReplayUsageError, FixtureError) as exc:
        raise click.UsageError(str(exc)) from None
    _finish(code)


@cli.command("format")
@click.argument("paths", nargs=-1, metavar="[PATHS]...")
@click.option(
    "--check", is_flag=True, help="Change nothing; exit 1 if a file would be reformatted."
)
@click.option(
    "--diff", is_flag=True, help="Print the changes as a unified diff instead (exit 1 if any)."
)
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
@click.option("--stdin-filename", metavar="PATH", help=STDIN_FILENAME_HELP)
@COLOR_OPTION
@catalog_options
@click.pass_obj
def format_command(
    settings: Settings, /, paths: tuple[str, ...], color: str, **options: Any
) -> None:
    """Lay out workflow files as the language server formats them.

    JSON: two-space indentation, one member per line, keys and scalars as written. YAML: comments,
    quoting and key order kept, nested blocks indented by two. A file that does not parse, whose
    layout would drop a comment, or that resolves outside the project and PATHS is left alone
    (exit 2). PATHS as for validate; '-' formats standard input to standard output.
    """
    from workrail_engine.cli.reformat import FormatOptions, run_format

    _run_rewriting(run_format, paths, FormatOptions(**options), settings, color)


@cli.command("list")
@click.option("--category", help="Only workflows of this category.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@catalog_options
@click.pass_obj
def list_command(settings: Settings, category: str | None, fmt: str) -> None:
    """List the workflows of every source.

    Sources, later wins: bundled, user (~/.workrail/workflows or $WORKRAIL_HOME), each directory
    of $WORKRAIL_WORKFLOW_PATH, workflow repositories (workflow-repos, see `workrail sources`),
    the project's ./workflows and ./.workrail/workflows, --workflows.
    """
    from workrail_engine.cli.browse import run_list

    _finish(run_list(settings.catalog(), category=category, fmt=fmt, console=Console.detect()))


@cli.group(invoke_without_command=True)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@catalog_options
@click.pass_context
def sources(ctx: click.Context, fmt: str) -> None:
    """List the workflow sources; sync and lock the Git ones.

    Each source with its workflow count and the ids later sources shadow; a repository
    (workflow-repos) with its commit, whether the lock holds it, and its last sync.
    """
    if ctx.invoked_subcommand is None:
        from workrail_engine.cli.sources import run_sources

        settings = ctx.obj
        _finish(
            run_sources(settings.catalog(), settings.project, fmt=fmt, console=Console.detect())
        )


@sources.command("sync")
@catalog_options
@click.pass_obj
def sources_sync(settings: Settings) -> None:
    """Fetch every workflow repository now (progress on stderr); with a lock, its commits."""
    from workrail_engine.cli.sources import run_sync

    _finish(run_sync(settings.project, console=Console.detect()))


@sources.command("lock")
@catalog_options
@click.pass_obj
def sources_lock(settings: Settings) -> None:
    """Write .workrail/sources.lock with the commit of each workflow repository.

    Commits already locked stay; a repository not yet locked is fetched and resolved.
    """
    from workrail_engine.cli.sources import run_lock

    _finish(run_lock(settings.project, console=Console.detect()))


@sources.command("update")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@catalog_options
@click.pass_obj
def sources_update(settings: Settings, names: tuple[str, ...]) -> None:
    """Re-resolve NAME (default: every repository) from its remote and rewrite the lock."""
    from workrail_engine.cli.sources import run_update

    _finish(run_update(settings.project, names, console=Console.detect()))


@cli.command()
@click.argument("workflow_id", metavar="ID")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@catalog_options
@click.pass_obj
def show(settings: Settings, workflow_id: str, fmt: str) -> None:
    """Show one workflow: metadata and steps.

    With --format json, the whole definition.
    """
    from workrail_engine.cli.browse import run_show

    _finish(run_show(settings.catalog(), workflow_id, fmt=fmt, console=Console.detect()))


@cli.command("next")
@click.argument("workflow_id", metavar="ID")
@click.option(
    "--completed",
    multiple=True,
    metavar="IDS",
    help="Completed step ids, comma-separated (repeatable).",
)
@click.option("--current", "current_step", metavar="STEP", help="The step the agent is on (loops).")
@click.option(
    "--context",
    "context_items",
    multiple=True,
    metavar="KEY=VALUE",
    help="A context variable (repeatable); VALUE is parsed as JSON when it parses, else a string; "
    "dotted keys nest (a.b=1).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@catalog_options
@click.pass_obj
def next_command(
    settings: Settings,
    workflow_id: str,
    completed: tuple[str, ...],
    current_step: str | None,
    context_items: tuple[str, ...],
    fmt: str,
) -> None:
    """Print the next step and its guidance.

    Stateless, like the MCP tool workflow_next: pass the steps already done with --completed.
    The output ends with the command to run once the step is done.
    """
    from workrail_engine.cli.navigate import parse_completed, parse_context, run_next

    try:
        context = parse_context(context_items)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--context") from None
    _finish(
        run_next(
            settings.catalog(),
            workflow_id,
            parse_completed(completed),
            context,
            current_step=current_step,
            fmt=fmt,
            console=Console.detect(),
            options=settings.arguments(),
        )
    )


@cli.command()
def schema() -> None:
    """Print the workflow JSON Schema (2020-12)."""
    from workrail_engine.cli.browse import run_schema

    _finish(run_schema(Console()))


@cli.command()
@click.argument("name", required=False)
@click.option(
    "--dir",
    "directory",
    type=EXISTING_DIRECTORY,
    default=None,
    help="An existing directory to write NAME.json in (default: the project's ./workflows, "
    "created when missing); with --repo, the repository's folder (default: the project's).",
)
@click.option(
    "--repo",
    is_flag=True,
    help="Write what a team's workflow repository needs: README.md, workflows/NAME.json "
    "(NAME default: team-workflow), a CI job running `workrail validate`, and the pre-commit "
    "hooks. Existing files are kept.",
)
@catalog_options
@click.pass_obj
def init(settings: Settings, name: str | None, directory: Path | None, repo: bool) -> None:
    """Write a workflow NAME.json, or (--repo) a team repository.

    The file is valid as written and carries $schema; an existing file is never overwritten.
    """
    from workrail_engine.cli.scaffold import check_name, run_init

    if name is None and not repo:
        raise click.UsageError("Missing argument 'NAME' (or use --repo).")
    if repo:
        from workrail_engine.cli.team_repository import DEFAULT_REPO_WORKFLOW, run_init_repo

        name = name or DEFAULT_REPO_WORKFLOW
    assert name is not None
    problem = check_name(name)
    if problem:
        raise click.BadParameter(problem, param_hint="NAME")
    if repo:
        _finish(run_init_repo(name, directory or settings.project, Console.detect()))
    _finish(run_init(name, directory or settings.project / "workflows", Console.detect()))


FORWARDED = {
    "context_settings": {
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "help_option_names": [],
    },
    "add_help_option": False,
}


@cli.command(**FORWARDED)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def mcp(argv: tuple[str, ...]) -> None:
    """Run the MCP server (workrail-mcp ARGS).

    Every argument after `mcp` is passed on; try `workrail mcp --help`.
    """
    from workrail_engine.cli.forward import forward

    _finish(forward("workrail_mcp.__main__", list(argv)))


@cli.command(**FORWARDED)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def lsp(argv: tuple[str, ...]) -> None:
    """Run the language server (workrail-lsp ARGS).

    Every argument after `lsp` is passed on; try `workrail lsp --help`.
    """
    from workrail_engine.cli.forward import forward

    _finish(forward("workrail_lsp.__main__", list(argv)))


@cli.command(**FORWARDED)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def dashboard(argv: tuple[str, ...]) -> None:
    """Serve the runs and workflows dashboard in a browser.

    Every argument after `dashboard` is passed on; try `workrail dashboard --help`.
    """
    from workrail_engine.cli.forward import forward

    _finish(forward("workrail_mcp.dashboard.command", list(argv)))


# The runs commands (run, runs, run-status, cancel) live with the runs engine's owner.
runs.register(cli, catalog_options)


def main(argv: list[str] | None = None) -> None:
    """The console script's entry point."""
    try:
        cli.main(args=argv, prog_name="workrail")
    except SystemExit as done:
        if done.code is None or type(done.code) is int:
            exit_without_teardown(done.code or 0)
        raise
