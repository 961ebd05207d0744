"""Command steps: a timeout on each, and no templates pasted into a shell's `-c` script."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..diagnostics import Severity
from ..evaluation.templates import TemplateRef, find_templates
from .step_finding import Finding

__all__ = ["command_findings"]

_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "fish", "ash", "busybox"}


def command_findings(step: Mapping[str, Any], kind: str) -> list[Finding]:
    run = step.get("run") if kind == "command" else None
    if run is None or not isinstance(run, Mapping):  # None first: most steps, cheap
        return []
    out: list[Finding] = []
    if "timeoutSeconds" not in run:
        message = "Command step without 'timeoutSeconds': a hung command would hold the run until the overall deadline"
        out.append(
            Finding(
                "/run",
                "WR501",
                Severity.WARNING,
                message,
                {"property": "timeoutSeconds"},
                on_key=True,
            )
        )
    command = run.get("command")
    if isinstance(command, list):
        out += _shell_script_templates(command)
    return out


def _shell_script_templates(command: list[object]) -> list[Finding]:
    if (
        not command
        or not isinstance(command[0], str)
        or os.path.basename(command[0]) not in _SHELLS
    ):
        return []
    out = []
    for index, arg in enumerate(command[1:], start=1):
        if arg == "-c" and index + 1 < len(command):
            script = command[index + 1]
            if isinstance(script, str) and "{{" in script:
                out += _script_templates(f"/run/command/{index + 1}", script)
    return out


# What an agent or a model wrote: a step's output, a context variable (a bare {{name}} is one).
_WRITTEN_BY_AGENTS = ("steps", "context")


def _script_templates(pointer: str, script: str) -> list[Finding]:
    """WR502 on each template of the script: an error for text an agent or a model wrote (it can
    hold `$(...)`, quotes, anything), a warning for a parameter or secret the user gave."""
    refs, _ = find_templates(script)
    out = []
    for ref in refs:
        agent_text = ref.bare or ref.namespace in _WRITTEN_BY_AGENTS
        name = _env_name(ref)
        fix = (
            f'pass it through the environment instead: "env": {{"{name}": "{{{{{ref.text}}}}}"}} '
            f"in 'run', and \"${name}\" in the script"
        )
        if agent_text:
            message = (
                f"{{{{{ref.text}}}}} is text an agent or a model wrote, pasted into shell code: "
                f"it can run any command; {fix}"
            )
        else:
            message = (
                f"{{{{{ref.text}}}}} is pasted into shell code (injection risk); {fix}, "
                'or as a separate argument ("$1")'
            )
        severity = Severity.ERROR if agent_text else Severity.WARNING
        where = (ref.span.start, ref.span.end)
        out.append(
            Finding(pointer, "WR502", severity, message, {"reference": ref.text}, within=where)
        )
    return out


def _env_name(ref: TemplateRef) -> str:
    """An environment variable name for the value: {{steps.plan.output}} is PLAN_OUTPUT."""
    words = "_".join(ref.path[-2:] if ref.namespace == "steps" else ref.path[-1:])
    name = "".join(c if c.isalnum() else "_" for c in words.upper())
    return name if name and not name[0].isdigit() else f"VALUE_{name}"
