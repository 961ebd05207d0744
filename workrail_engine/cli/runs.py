"""`workrail run`, `fork`, `runs`, `run-status`, `continue`, `cancel`: runs from a terminal.

The CLI runs command steps because its user asked for them (the MCP server needs
``--allow-commands``). Progress is a live display on a terminal and plain lines otherwise;
Ctrl-C cancels the run cleanly (its processes are killed as groups) and exits 130.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from workrail_engine.cli.navigate import json_or_text
from workrail_engine.cli.settings import Settings
from workrail_engine.text.regular_files import UnreadableFile, read_regular_file, read_stream

if TYPE_CHECKING:
    from workrail_engine.result_shapes import RunResult
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


def _service(
    settings: Settings, sandbox: bool = False, *, executes: bool = True, store: Path | None = None
) -> RunService:
    """``executes=False`` for the commands that only look at or answer runs: they execute none
    (a run that needs a process is handed to a worker, `workrail worker`)."""
    from workrail_engine.runs import RunService

    return RunService(
        Path(settings.project).resolve(),
        allow_commands=True,
        sandbox=sandbox,
        executes=executes,
        home=store,
    )


def _explaining_run_ids(settings: Settings) -> Any:
    from workrail_engine.runs.resolve import run_ids_explained

    return run_ids_explained(
        settings.catalog(), lambda workflow: f"run `workrail run {workflow}` to start one"
    )


def _line(snap: RunResult) -> str:
    text = f"{snap['workflow_id']} {snap['status']}: {snap['steps_completed']}/{snap['steps_total']} steps"
    if snap.get("step_results"):
        last = snap["step_results"][-1]
        text += f" — {last['step_name']} {last['status']} ({last['duration']:.2f}s)"
    return text


def _print_result(snap: Mapping[str, Any], fmt: str) -> None:
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
    for line in _lineage(snap):
        click.echo(line)
    if snap.get("session"):
        session = snap["session"]
        click.echo(
            f"session of {snap.get('workflow_name')} pinned at {session['workflow_hash'][:19]}"
            + (f"; goal: {session['goal']}" if session.get("goal") else "")
        )
        for line in _lineage(session):
            click.echo(line)
    if snap.get("answered_step") and snap["status"] == "running":
        click.echo(
            f"the answer to step {snap['answered_step']!r} was accepted; the run goes on "
            f"(follow it: workrail run-status {snap['workflow_id']})"
        )
    if snap.get("waiting"):
        waiting = snap["waiting"]
        guidance = (waiting.get("guidance") or {}).get("prompt") or waiting["step"].get("prompt")
        click.echo(f"waiting for the agent at step {waiting['step']['id']!r}:\n\n{guidance}\n")
        key = waiting.get("step_key")
        click.echo(
            f"When this step is done, run: workrail continue {snap['workflow_id']} "
            f"--step {key} --output TEXT|@FILE [--context KEY=VALUE]"
        )


def _lineage(record: Mapping[str, Any]) -> list[str]:
    """Where a run or a session was forked from, and its forks, as lines (a session's name the
    attempt of the step it branched at: docs/sessions.md, Forking a session; docs/runs.md, Fork)."""
    from workrail_engine.runs.fork import lineage_links
    from workrail_engine.runs.fork import link_place as at

    links = lineage_links(record)
    lines = []
    if links["forked_from"]:
        lines.append(f"forked from {links['forked_from']['run_id']} at {at(links['forked_from'])}")
    if links["forks"]:
        lines.append("forks: " + ", ".join(f"{f['run_id']} at {at(f)}" for f in links["forks"]))
    return lines


def _follow(service: RunService, run_id: str, live: bool) -> Mapping[str, Any]:
    """Watch the run until it ends or waits; Ctrl-C cancels it.

    SIGINT only sets a flag: a KeyboardInterrupt raised inside a database call could leave the
    store's connection half-used just when the cancel needs it.
    """
    interrupted = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.set())
    try:
        snap: Mapping[str, Any] = _watch(service, run_id, live, interrupted)
        if interrupted.is_set():
            snap = _cancel(service, run_id)
        return snap
    finally:
        signal.signal(signal.SIGINT, previous)


def _watch(service: RunService, run_id: str, live: bool, stop: threading.Event) -> RunResult:
    if not live:
        return service.wait(
            run_id, 10**9, on_change=lambda s: click.echo(_line(s), err=True), stop=stop
        )
    from rich.console import Console as RichConsole
    from rich.progress import Progress

    # on stderr, like the plain lines: stdout carries the result only
    with Progress(console=RichConsole(stderr=True), transient=True) as progress:
        task = progress.add_task(run_id, total=None)

        def show(snap: RunResult) -> None:
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
    return {**service.wait(run_id, 10), "interrupted": True}


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
    _follow_to_the_end(service, run_id, fmt)


def _follow_to_the_end(service: RunService, run_id: str, fmt: str) -> None:
    """Follow a run this process started until it ends or waits, print it, exit with its code."""
    snap = _follow(service, run_id, live=sys.stderr.isatty() and fmt == "text")
    _print_result(snap, fmt)
    code = 130 if snap.get("interrupted") else _EXIT.get(snap["status"], 1)
    _leave(code)
    click.get_current_context().exit(code)


@click.command("fork", short_help="Run a run again from one of its steps, and follow it.")
@click.argument("run_id", metavar="RUN_ID")
@click.option(
    "--from",
    "from_step",
    required=True,
    metavar="STEP_ID",
    help="The step to run again from: a step id (its first result), a step key as "
    "run-status shows it (test[2] in a loop), or a parallel group's or loop's id (the first of "
    "its steps that ran: all of it runs again). What ended before it is kept, not run again.",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A parameter to change from this step on (repeatable); VALUE is JSON when it parses.",
)
@click.option(
    "--context",
    "context_items",
    multiple=True,
    metavar="NAME=VALUE",
    help="A context variable to add or change from this step on (repeatable).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_obj
def fork_command(
    settings: Settings,
    run_id: str,
    from_step: str,
    params: tuple[str, ...],
    context_items: tuple[str, ...],
    fmt: str,
) -> None:
    """Start a new run that keeps what RUN_ID recorded before STEP_ID (no command of those runs
    again, no agent is asked again) and runs from STEP_ID on with the parameters and context
    changed as given; print its id and follow it as `workrail run` does.

    Exit status: as `workrail run`; 2 for an unknown run or step (the steps to choose from are
    listed)."""
    from workrail_engine.cli.navigate import parse_context
    from workrail_engine.errors import InvalidParams, RunNotFound

    try:
        context = parse_context(context_items)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--context") from None
    service = _service(settings)
    try:
        with _explaining_run_ids(settings):
            values = _parameters(service.workflow_of(run_id), params)
            fork_id = service.fork(run_id, from_step, values, context)
    except RunNotFound as error:
        raise click.BadParameter(error.message, param_hint="RUN_ID") from None
    except InvalidParams as error:
        hints = {"from_step": "--from", "run_id": "RUN_ID"}
        hint = hints.get(str(error.data.get("details")), "--param")
        raise click.BadParameter(error.message, param_hint=hint) from None
    # a step id, a group's or a loop's names the first step of it that ran: say which
    started: Mapping[str, Any] = service.get(fork_id)
    at = (started.get("forked_from") or {}).get("step") or from_step
    named = f" (the first step of {from_step!r} that ran)" if at != from_step else ""
    click.echo(f"started {fork_id} (forked from {run_id} at {at}{named})", err=True)
    _follow_to_the_end(service, fork_id, fmt)


def _plan_text(plan: RunResult) -> str:
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


def _leave(code: int, *, always: bool = False) -> None:
    """Exit now if a run of this process is still going (waiting for an agent, or still being
    cancelled), or ``always``: its thread is blocked in the store and the interpreter would wait
    for it. The run is durable; the next process that opens the store takes it over."""
    from workrail_engine.runs import durable_runs_in_progress

    if always or durable_runs_in_progress():
        from workrail_engine.runs import durable

        runtime = durable.running()
        if runtime is not None:  # not left running until some process opens the store again
            runtime.leave()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


@click.command("runs", short_help="List recent runs and sessions, or find sessions.")
@click.option("--running", is_flag=True, help="Only runs in progress (running or waiting).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option(
    "--search",
    metavar="TEXT",
    help="Find sessions by words of their goal and notes, workflow id and this project's git "
    "branch and HEAD (at most 5, best first).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_obj
def runs_command(
    settings: Settings, running: bool, limit: int, search: str | None, fmt: str
) -> None:
    """List recent runs and sessions, newest first (or find sessions with --search)."""
    if search is not None:
        _print_candidates(
            _service(settings, executes=False).sessions.resume(
                workspace=str(Path(settings.project).resolve()), query=search
            ),
            fmt,
        )
        return
    runs = _service(settings, executes=False).list(running_only=running, limit=limit)
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
            "lineage": "; ".join(_lineage(run)),
        }
        for run in runs
    ]
    columns: tuple[str, ...] = ("run", "status", "started", "workflow")
    if any(row["lineage"] for row in rows):
        columns += ("lineage",)
    click.echo(render_table(rows, columns))


@click.command("run-status")
@click.argument("run_id", metavar="RUN_ID")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_obj
def run_status_command(settings: Settings, run_id: str, fmt: str) -> None:
    """Show a run: status and step results."""
    with _explaining_run_ids(settings):
        _print_result(_service(settings, executes=False).get(run_id), fmt)


@click.command("cancel", short_help="Cancel a run and stop its processes.")
@click.argument("run_id", metavar="RUN_ID")
@click.option("--reason", help="Why (recorded with the run).")
@click.pass_obj
def cancel_command(settings: Settings, run_id: str, reason: str | None) -> None:
    """Cancel a run; its running processes are stopped within seconds."""
    with _explaining_run_ids(settings):
        result = _service(settings, executes=False).cancel(run_id, reason)
    click.echo(
        result.get("message")
        or f"{run_id}: cancelled after {result['steps_completed']} completed step(s)"
    )


def _output_text(value: str) -> str:
    """``--output TEXT`` or ``--output @FILE`` (``@-``: standard input).

    A file is read like a workflow file (a regular file of at most 5 MiB), so that ``@/dev/zero``
    cannot grow until MemoryError nor ``@FIFO`` wait for a writer forever."""
    if not value.startswith("@"):
        return value
    name = value[1:]
    try:
        data = read_stream(sys.stdin.buffer) if name == "-" else read_regular_file(name)
        return data.decode("utf-8")
    except (UnreadableFile, UnicodeDecodeError) as error:
        why = "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else str(error)
        raise click.BadParameter(f"cannot read {name!r}: {why}", param_hint="--output") from None


@click.command("continue", short_help="Answer the step a run or session waits on.")
@click.argument("run_id", metavar="RUN_ID")
@click.option(
    "--output",
    required=True,
    metavar="TEXT|@FILE",
    help="What was produced for the waiting step (a session's notes); @FILE reads a file "
    "(@- standard input).",
)
@click.option(
    "--step",
    "step_key",
    metavar="KEY",
    help="The step attempt answered (waiting.step_key, as printed): an answer meant for a step "
    "the run has left is refused instead of being applied to the next one.",
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
    default=None,
    help="Follow the run at most this many seconds (default: to its next wait or its end); "
    "the run goes on either way.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_obj
def continue_command(
    settings: Settings,
    run_id: str,
    output: str,
    step_key: str | None,
    context_items: tuple[str, ...],
    wait: float | None,
    fmt: str,
) -> None:
    """Submit the output of the step a run (or session) waits on, and follow the run to its next
    wait or end. The answer is applied exactly once: the same answer again is a replay (exit
    0); an answer refused — another answer was applied first, the run is not waiting on that
    step, the output fails the step's checks — exits 1 and says what the run waits on now.
    Ctrl-C or the end of --wait stops following; the run goes on in the process executing it."""
    from workrail_engine.cli.navigate import parse_context

    try:
        context = parse_context(context_items)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--context") from None
    text = _output_text(output)  # before the run store is opened: a bad file costs nothing
    service = _service(settings, executes=False)
    interrupted = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.set())
    try:
        with _explaining_run_ids(settings):
            seconds = 10**9 if wait is None else wait
            result = service.continue_run(
                run_id, text, context, seconds, step_key=step_key, stop=interrupted
            )
    finally:
        signal.signal(signal.SIGINT, previous)
    if result.get("outcome") == "blocked":
        if fmt == "json":
            click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            click.echo(f"{run_id}: the output does not pass the step's checks; the run still waits")
            for issue in result.get("issues", []):
                click.echo(f"  - {issue}")
            retry = _retry_line(run_id, result)
            if retry:
                click.echo(retry)
        click.get_current_context().exit(1)
    if result.get("outcome") == "replayed" and fmt == "text":
        click.echo(f"{run_id}: this answer was applied before; nothing was sent again", err=True)
    _print_result(result, fmt)
    if interrupted.is_set():
        click.echo(
            f"stopped following {run_id}; it goes on (workrail run-status {run_id})", err=True
        )
        click.get_current_context().exit(130)
    click.get_current_context().exit(_EXIT.get(result["status"], 1))


def _retry_line(run_id: str, blocked: Mapping[str, Any]) -> str | None:
    """The engine's retry (the answer that passes) as the command that sends it; the artifacts a
    step wants are named, as `continue` sends text only, and so are the context values to fill
    in (a placeholder each)."""
    retry = blocked.get("retry")
    if not isinstance(retry, dict) or retry.get("notes") is None:
        return None
    command = ["workrail", "continue", run_id]
    key = (blocked.get("waiting") or {}).get("step_key")
    if key is not None:
        command += ["--step", str(key)]
    command += ["--output", retry["notes"]]
    for name, value in (retry.get("context") or {}).items():
        command += ["--context", f"{name}={_context_text(value)}"]
    line = "Send instead: " + shlex.join(command)
    if retry.get("fill"):
        line += "\n  replacing each <…> by a value it allows: " + ", ".join(retry["fill"])
    if retry.get("artifacts"):
        line += (
            "\n  with these artifacts, which `continue` does not send (the MCP tool "
            "continue_workflow does): " + json.dumps(retry["artifacts"], ensure_ascii=False)
        )
    return line


def _context_text(value: Any) -> str:
    """A context value as ``--context`` reads it back: text as it is unless it would read as
    JSON (``"true"`` stays a string), anything else as JSON."""
    from workrail_engine.cli.navigate import json_or_text

    if isinstance(value, str) and json_or_text(value) == value:
        return value
    return json.dumps(value, ensure_ascii=False)


def _print_candidates(found: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found["candidates"]:
        click.echo("No session matches.", err=True)
        return
    for c in found["candidates"]:
        age = _age(c["ageSeconds"])
        step = c["pendingStepId"] or ("complete" if c["isComplete"] else c["status"])
        click.echo(f"{c['runId']}  {c['workflowId']}  at {step}  ({age} ago)  {c['goal'] or ''}")
        if c.get("forkedFrom"):
            parent = c["forkedFrom"]
            click.echo(f"    forked from {parent['runId']} at step {parent['stepId']!r}")
        if c.get("lastNotes"):
            click.echo("    " + c["lastNotes"].strip().splitlines()[0][:100])
    click.echo(
        "Continue one: workrail continue RUN_ID --output TEXT (workrail run-status RUN_ID shows "
        "the step it waits on)"
    )


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"


@click.command("worker", short_help="Execute runs handed over, until none is left.")
@click.option(
    "--store",
    type=click.Path(file_okay=False, path_type=Path),
    help="The run store's directory (default: runs/ in WORKRAIL_HOME).",
)
@click.pass_obj
def worker_command(settings: Settings, store: Path | None) -> None:
    """Take over the runs that need a process — answered runs whose process is gone, runs of
    processes that died or stopped — execute them to their next wait or end, and exit when
    nothing is left. The CLI's `continue`, `runs`, `run-status` and a server that shuts down
    start one by themselves (see docs/runs.md, "No run left behind")."""
    service = _service(settings, store=store)
    try:
        service.work()
    except Exception as error:
        # The store unreachable for longer than its reconnects wait (or a fault): say so once
        # and end now. The exit hook's clean stop would read the store again, waiting as long
        # once more, for runs that are durable anyway: the next process to open the store
        # takes them over. The other threads' warnings (their own reconnects, still trying)
        # stop here: the reason is the last line the user sees.
        logging.disable(logging.CRITICAL)
        first_line = next(iter(str(error).strip().splitlines()), "")
        click.echo(
            f"workrail worker: stopped, the run store failed: {type(error).__name__}: "
            f"{first_line}; its runs are taken over by the next process that opens the store",
            err=True,
        )
        _leave(1, always=True)
    _leave(0)


def register(cli: click.Group, catalog_options: Callable[[click.Command], click.Command]) -> None:
    """Add the runs commands, each taking ``--project``/``--workflows`` after its name too."""
    for command in (
        run_command,
        fork_command,
        runs_command,
        run_status_command,
        continue_command,
        cancel_command,
        worker_command,
    ):
        cli.add_command(catalog_options(command))
