"""`workrail run`, `runs`, `run-status`, `continue`, `cancel`: runs from a terminal.

The CLI runs command steps because its user asked for them (the MCP server needs
``--allow-commands``). Progress is a live display on a terminal and plain lines otherwise;
Ctrl-C cancels the run cleanly (its processes are killed as groups) and exits 130.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from workrail_engine.cli.navigate import json_or_text
from workrail_engine.cli.settings import Settings

if TYPE_CHECKING:
    from workrail_engine.runs import RunService

__all__ = ["register"]

_EXIT = {"success": 0, "waiting": 0, "running": 0}


def _param_value(schema: Any, name: str, text: str) -> Any:
    """``--param k=v``: JSON when it parses and the schema does not want a string, else the text."""
    prop = (schema or {}).get("properties", {}).get(name, {}) if isinstance(schema, dict) else {}
    if isinstance(prop, dict) and prop.get("type") == "string":
        return text
    try:
        return json_or_text(text)
    except ValueError as exc:
        raise click.BadParameter(f"{name}: {exc}", param_hint="--param") from None


def _parameters(workflow: dict[str, Any], pairs: tuple[str, ...]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{pair!r} is not NAME=VALUE", param_hint="--param")
        values[name] = _param_value(workflow.get("parameters"), name, text)
    from workrail_engine.errors import InvalidParams
    from workrail_engine.runs import refuse_undeclared

    try:
        refuse_undeclared(workflow, values)
    except InvalidParams as exc:
        raise click.BadParameter(exc.message, param_hint="--param") from None
    return values


def _service(settings: Settings, sandbox: bool = False) -> RunService:
    from workrail_engine.runs import RunService

    return RunService(Path(settings.project).resolve(), allow_commands=True, sandbox=sandbox)


def _explaining_run_ids(settings: Settings) -> Any:
    from workrail_engine.runs.resolve import run_ids_explained

    return run_ids_explained(
        settings.catalog(), lambda workflow: f"run `workrail run {workflow}` to start one"
    )


def _line(snap: dict[str, Any]) -> str:
    text = f"{snap['workflow_id']} {snap['status']}: {snap['steps_completed']}/{snap['steps_total']} steps"
    if snap.get("step_results"):
        last = snap["step_results"][-1]
        text += f" — {last['step_name']} {last['status']} ({last['duration']:.2f}s)"
    return text


def _print_result(snap: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(snap, indent=2, ensure_ascii=False))
        return
    for result in snap.get("step_results", []):
        click.echo(
            f"  {result['status']:<11} {result['step_name']} ({result['duration']:.2f}s)"
            + (f": {result['error']}" if result.get("error") else "")
        )
    click.echo(
        f"{snap['workflow_id']}: {snap['status']} — {snap['steps_completed']}/{snap['steps_total']} steps "
        f"in {snap['execution_time']:.2f}s"
        + (f"; {snap['error_message']}" if snap.get("error_message") else "")
    )
    if snap.get("waiting"):
        waiting = snap["waiting"]
        guidance = (waiting.get("guidance") or {}).get("prompt") or waiting["step"].get("prompt")
        click.echo(f"waiting for the agent at step {waiting['step']['id']!r}:\n\n{guidance}\n")
        click.echo(
            f"When this step is done, run: workrail continue {snap['workflow_id']} "
            "--output TEXT|@FILE [--context KEY=VALUE]"
        )


def _follow(service: RunService, run_id: str, live: bool) -> dict[str, Any]:
    """Watch the run until it ends or waits; Ctrl-C cancels it.

    SIGINT only sets a flag: a KeyboardInterrupt raised inside a database call could leave the
    store's connection half-used just when the cancel needs it.
    """
    interrupted = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.set())
    try:
        snap = _watch(service, run_id, live, interrupted)
        if interrupted.is_set():
            snap = _cancel(service, run_id)
        return snap
    finally:
        signal.signal(signal.SIGINT, previous)


def _watch(service: RunService, run_id: str, live: bool, stop: threading.Event) -> dict[str, Any]:
    if not live:
        return service.wait(
            run_id, 10**9, on_change=lambda s: click.echo(_line(s), err=True), stop=stop
        )
    from rich.console import Console as RichConsole
    from rich.progress import Progress

    # on stderr, like the plain lines: stdout carries the result only
    with Progress(console=RichConsole(stderr=True), transient=True) as progress:
        task = progress.add_task(run_id, total=None)

        def show(snap: dict[str, Any]) -> None:
            progress.update(
                task,
                completed=snap["steps_completed"],
                total=snap["steps_total"],
                description=_line(snap),
            )

        return service.wait(run_id, 10**9, on_change=show, stop=stop)


def _cancel(service: RunService, run_id: str) -> dict[str, Any]:
    click.echo(f"cancelling {run_id} ...", err=True)
    service.cancel(run_id, "interrupted from the terminal (Ctrl-C)")
    snap = service.wait(run_id, 10)
    snap["interrupted"] = True
    return snap


@click.command("run", short_help="Run a workflow (by id or file) and follow it.")
@click.argument("workflow", metavar="ID|PATH")
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A workflow parameter (repeatable); VALUE is JSON when it parses, else text.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (steps, order, parallel groups, argv); run nothing.",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), help="Overall timeout in seconds."
)
@click.option("--parallel-limit", type=click.IntRange(min=1), help="Most steps running at once.")
@click.option("--sandbox", is_flag=True, help="Run every command step inside bubblewrap.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_obj
def run_command(
    settings: Settings,
    workflow: str,
    params: tuple[str, ...],
    dry_run: bool,
    timeout: float | None,
    parallel_limit: int | None,
    sandbox: bool,
    fmt: str,
) -> None:
    """Run a workflow (by id, or the path of a workflow file) and follow its progress.

    Exit status: 0 success (or waiting for an agent), 1 failed, partial or cancelled, 130 after Ctrl-C.
    """
    from workrail_engine.runs import RunOptions, resolve_workflow

    definition, _ = resolve_workflow(settings.catalog(), workflow, any_path=True, base=Path.cwd())
    service = _service(settings, sandbox)
    options = RunOptions(timeout=timeout, parallel_limit=parallel_limit)
    values = _parameters(definition, params)
    if dry_run:
        plan = service.plan(definition, values, options)
        click.echo(
            json.dumps(plan, indent=2, ensure_ascii=False) if fmt == "json" else _plan_text(plan)
        )
        return
    run_id = service.run(definition, values, options)
    click.echo(f"started {run_id}", err=True)
    snap = _follow(service, run_id, live=sys.stderr.isatty() and fmt == "text")
    _print_result(snap, fmt)
    code = 130 if snap.get("interrupted") else _EXIT.get(snap["status"], 1)
    _leave(code)
    click.get_current_context().exit(code)


def _plan_text(plan: dict[str, Any]) -> str:
    """The dry-run plan for a person: numbered groups, each step's argv as a shell would show it."""
    import shlex

    params = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in plan.get("parameters", {}).items()
    )
    timeout = f"timeout {plan['timeout']} s" if plan.get("timeout") else "no overall timeout"
    lines = [
        f"Plan for {plan['workflow_name']} (dry run: nothing executed): {plan['steps_total']} steps, "
        f"{timeout}",
        f"parameters: {params or '(none)'}",
    ]
    for group in plan.get("groups", []):
        steps = group.get("steps", [])
        if group.get("parallel"):
            limit = (
                f", at most {group['parallel_limit']} at once"
                if group.get("parallel_limit")
                else ""
            )
            lines.append(
                f"{group['order']}. {group['step_name']}: in parallel{limit} ({group.get('decision', 'runs')})"
            )
            lines += [f"   - {_plan_step(step, shlex)}" for step in steps]
        else:
            lines += [f"{group['order']}. {_plan_step(step, shlex)}" for step in steps]
    return "\n".join(lines)


def _plan_step(step: dict[str, Any], shlex: Any) -> str:
    name = step["step_name"]
    if step.get("decision") != "runs":
        return f"{name}: {step.get('decision')}" + (
            f" ({step['reason']})" if step.get("reason") else ""
        )
    if step.get("kind") != "command":
        return f"{name}: waits for the agent ({step.get('kind')} step)"
    extras = [f"timeout {step['timeout']} s"] if step.get("timeout") else []
    if step.get("max_attempts", 1) > 1:
        extras.append(f"up to {step['max_attempts']} attempts")
    extras += [f"{k}={v}" for k, v in (step.get("env") or {}).items()]
    return f"{name}: {shlex.join(step['argv'])}" + (f"  [{', '.join(extras)}]" if extras else "")


def _leave(code: int) -> None:
    """Exit now if a run of this process is still going (waiting for an agent, or still being
    cancelled): its thread is blocked in the store and the interpreter would wait for it. The
    run is durable; the next process that opens the store takes it over."""
    from workrail_engine.runs import durable_runs_in_progress

    if durable_runs_in_progress():
        from workrail_engine.runs import durable

        runtime = durable.running()
        if runtime is not None:  # not left running until some process opens the store again
            runtime.kill_in_flight()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


@click.command("runs")
@click.option("--running", is_flag=True, help="Only runs in progress (running or waiting).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_obj
def runs_command(settings: Settings, running: bool, limit: int, fmt: str) -> None:
    """List recent runs, newest first."""
    runs = _service(settings).list(running_only=running, limit=limit)
    if fmt == "json":
        click.echo(json.dumps(runs, indent=2))
        return
    if not runs:
        click.echo("No runs" + (" in progress." if running else " yet."), err=True)
        return
    from workrail_engine.cli.browse import render_table

    rows = [
        {
            "run": run["workflow_id"],
            "status": run["status"],
            "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run["started_at"])),
            "workflow": str(run["workflow_name"] or ""),
        }
        for run in runs
    ]
    click.echo(render_table(rows, ("run", "status", "started", "workflow")))


@click.command("run-status")
@click.argument("run_id", metavar="RUN_ID")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_obj
def run_status_command(settings: Settings, run_id: str, fmt: str) -> None:
    """Show a run: status and step results."""
    with _explaining_run_ids(settings):
        _print_result(_service(settings).get(run_id), fmt)


@click.command("cancel", short_help="Cancel a run and stop its processes.")
@click.argument("run_id", metavar="RUN_ID")
@click.option("--reason", help="Why (recorded with the run).")
@click.pass_obj
def cancel_command(settings: Settings, run_id: str, reason: str | None) -> None:
    """Cancel a run; its running processes are stopped within seconds."""
    with _explaining_run_ids(settings):
        result = _service(settings).cancel(run_id, reason)
    click.echo(
        result.get("message")
        or f"{run_id}: cancelled after {result['steps_completed']} completed step(s)"
    )


def _output_text(value: str) -> str:
    """``--output TEXT`` or ``--output @FILE`` (``@-``: standard input)."""
    if not value.startswith("@"):
        return value
    name = value[1:]
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except OSError as error:
        raise click.BadParameter(
            f"cannot read {name!r}: {error.strerror}", param_hint="--output"
        ) from None


@click.command("continue", short_help="Answer the step a run waits on.")
@click.argument("run_id", metavar="RUN_ID")
@click.option(
    "--output",
    required=True,
    metavar="TEXT|@FILE",
    help="What was produced for the waiting step; @FILE reads a file (@- standard input).",
)
@click.option(
    "--context",
    "context_items",
    multiple=True,
    metavar="KEY=VALUE",
    help="A context variable to add or change (repeatable); VALUE is JSON when it parses.",
)
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=30,
    show_default=True,
    help="Seconds to follow the run before printing its state.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_obj
def continue_command(
    settings: Settings,
    run_id: str,
    output: str,
    context_items: tuple[str, ...],
    wait: float,
    fmt: str,
) -> None:
    """Submit the output of the step a run waits on; the run goes on when it passes the step's
    checks (exit 1 when it does not: the run stays at the step)."""
    from workrail_engine.cli.navigate import parse_context

    try:
        context = parse_context(context_items)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--context") from None
    with _explaining_run_ids(settings):
        result = _service(settings).continue_run(run_id, _output_text(output), context, wait)
    if result.get("outcome") == "blocked":
        if fmt == "json":
            click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            click.echo(f"{run_id}: the output does not pass the step's checks; the run still waits")
            for issue in result.get("issues", []):
                click.echo(f"  - {issue}")
        _leave(1)
        click.get_current_context().exit(1)
    _print_result(result, fmt)
    code = _EXIT.get(result["status"], 1)
    _leave(code)
    click.get_current_context().exit(code)


def register(cli: click.Group, catalog_options: Callable[[click.Command], click.Command]) -> None:
    """Add the runs commands, each taking ``--project``/``--workflows`` after its name too."""
    for command in (
        run_command,
        runs_command,
        run_status_command,
        continue_command,
        cancel_command,
    ):
        cli.add_command(catalog_options(command))
