"""One attempt of a command step: render its argv per element, check where it runs, run it.

This is the body of the durable attempt (see `durable.effects`), kept free of DBOS so it can be tested
alone. Everything it returns has been through the secret mask.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SecurityViolation
from ..evaluation.rules import validate_output
from ..evaluation.templates import TemplateError, render
from .command_process import CommandOutcome, CommandSpec, StepGroups, run_command
from .secrets import SecretSet
from .while_running import WhileRunning
from .workspace import bubblewrap_argv, check_sandbox, minimal_environment, resolve_cwd

__all__ = [
    "AttemptSettings",
    "DEFAULT_RETRY",
    "output_verdict",
    "retry_policy",
    "run_attempt",
]

# onFailure: retry without a retry block: three tries, 1 s then 2 s apart.
DEFAULT_RETRY = {"maxAttempts": 3, "delaySeconds": 1.0, "backoff": 2.0}
_ONE_ATTEMPT = (1, DEFAULT_RETRY["delaySeconds"], DEFAULT_RETRY["backoff"])  # no retry asked for


@dataclass(frozen=True)
class AttemptSettings:
    project: Path
    allow_commands: bool
    sandbox: bool = False  # --sandbox: every command step in bubblewrap
    grace: float = 2.0


def retry_policy(step: Mapping[str, Any]) -> tuple[int, float, float]:
    """(max attempts counting the first, first delay, backoff factor)."""
    retry = step.get("retry")
    if retry is None and step.get("onFailure") != "retry":
        return _ONE_ATTEMPT  # most steps: asked for every step of a run
    if not isinstance(retry, Mapping):
        retry = DEFAULT_RETRY if step.get("onFailure") == "retry" else {"maxAttempts": 1}
    attempts = retry.get("maxAttempts", DEFAULT_RETRY["maxAttempts"])
    delay = retry.get("delaySeconds", DEFAULT_RETRY["delaySeconds"])
    backoff = retry.get("backoff", DEFAULT_RETRY["backoff"])
    return max(int(attempts), 1), max(float(delay), 0.0), max(float(backoff), 1.0)


def render_command(
    step: Mapping[str, Any], values: Mapping[str, Any]
) -> tuple[list[str], dict[str, str]]:
    """argv and extra environment with templates substituted, one element at a time."""
    run = step.get("run") or {}
    argv = [render(str(arg), values) for arg in run.get("command") or []]
    env = {str(k): render(str(v), values) for k, v in (run.get("env") or {}).items()}
    return argv, env


def _step_environment(
    environment: Mapping[str, str] | None, extra: Mapping[str, str], secrets: SecretSet
) -> dict[str, str]:
    """What a step's process gets: the inherited environment, the step's own, its secrets."""
    return {
        **(minimal_environment() if environment is None else environment),
        **extra,
        **secrets.values,
    }


def _failure(message: str, started: float, **extra: Any) -> dict[str, Any]:
    return {
        "status": "failed",
        "output": None,
        "error": message,
        "duration": time.time() - started,
        "finished_at": time.time(),
        **extra,
    }


def _spec(
    step: Mapping[str, Any],
    values: Mapping[str, Any],
    secrets: SecretSet,
    settings: AttemptSettings,
    remaining: float | None,
    environment: Mapping[str, str] | None,
) -> CommandSpec:
    run = step.get("run") or {}
    # made at the step's start, never before: the values, the secrets and the tree are the start's
    argv, extra_env = render_command(step, {**values, "secrets": secrets.values})
    if not argv:
        raise TemplateError("run.command is empty")
    env = _step_environment(environment, extra_env, secrets)
    # where it runs is checked at its start, never before: the step before may change the tree
    cwd = resolve_cwd(settings.project, run.get("cwd"))
    if step.get("sandbox") or settings.sandbox:
        argv = bubblewrap_argv(check_sandbox(), settings.project, cwd, argv)
    # the step's own timeout or what is left of the run's, the earlier (no list made: per step)
    timeout = run.get("timeoutSeconds")
    if timeout is None or (remaining is not None and remaining < timeout):
        timeout = remaining
    return CommandSpec(
        argv,
        cwd,
        env,
        timeout=timeout,
        grace=settings.grace,
        secrets=tuple(secrets.values.values()),
    )


def _judge(
    step: Mapping[str, Any], outcome: CommandOutcome, values: Mapping[str, Any]
) -> tuple[str, str | None, Any]:
    if not outcome.ok:
        reason = outcome.error or f"exited with status {outcome.exit_code}"
        return ("cancelled" if outcome.cancelled else "failed"), reason, None
    return output_verdict(step, outcome.stdout, values)


def output_verdict(
    step: Mapping[str, Any], stdout: str, values: Mapping[str, Any]
) -> tuple[str, str | None, Any]:
    """A command's output that exited 0 judged by the step's ``validationCriteria``: (status,
    error, validation) — for an attempt just run, and for one recorded (replay)."""
    criteria = step.get("validationCriteria")
    if criteria is None:
        return "success", None, None
    context = {**values.get("parameters", {}), **values.get("context", {}), **values}
    checked = validate_output(criteria, stdout, context)
    if checked.valid:
        return "success", None, None
    return (
        "failed",
        "output failed its validation criteria: " + "; ".join(checked.issues),
        checked.to_dict(),
    )


def run_attempt(
    step: Mapping[str, Any],
    values: Mapping[str, Any],
    secret_names: list[str],
    settings: AttemptSettings,
    deadline: float | None,
    cancel: threading.Event | None = None,
    groups: StepGroups | None = None,
    environment: Mapping[str, str] | None = None,
    *,
    before_spawn: Callable[[], None] | None = None,
    while_running: WhileRunning | None = None,
) -> dict[str, Any]:
    """Run one attempt; a dict with status, output, error, duration, finished_at (all masked).

    ``environment``: what the step inherits (`minimal_environment`), when the caller computed it
    once for many attempts (reading it costs ≈ 0.08 ms, a tenth of spawning ``true``).
    ``before_spawn()``: called once, after the command is rendered and right before its process
    is spawned — or before a failure is returned when none will be (it may raise instead: the
    run's cancel check). ``while_running``: see `run_command`."""
    started = time.time()
    ready = before_spawn or _nothing
    secrets = SecretSet.from_environment(secret_names)
    if not settings.allow_commands:
        ready()
        return _failure(
            "command steps are disabled in this server (start it with --allow-commands)", started
        )
    remaining = None if deadline is None else deadline - started
    if remaining is not None and remaining <= 0:
        ready()
        return _failure("the run's overall timeout was reached", started, deadline=True)
    try:
        spec = _spec(step, values, secrets, settings, remaining, environment)
    except (TemplateError, SecurityViolation) as exc:
        ready()
        failed: dict[str, Any] = secrets.mask(_failure(str(exc), started))
        return failed
    outcome = run_command(
        spec,
        cancel,
        groups,
        before_spawn=ready,
        while_running=while_running,
    )
    status, error, validation = _judge(step, outcome, values)
    hit_deadline = outcome.timed_out and remaining is not None and spec.timeout == remaining
    output = outcome.output()
    result: dict[str, Any] = {"status": status, "output": output}
    if error is not None:
        result["error"] = error
    # to the output's tenth of a millisecond, as the step's result: a step of one attempt
    # stores it once (`journal`)
    result["duration"] = output["duration"]
    result["finished_at"] = time.time()
    if hit_deadline:
        result["deadline"] = True
    if validation is not None:
        result["validation"] = validation
    masked: dict[str, Any] = secrets.mask(result)
    return masked


def _nothing() -> None:
    pass
