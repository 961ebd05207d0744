"""Command steps: a timeout on each, and no templates handed to a shell's `-c` script."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..diagnostics import Severity
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
                message = (
                    "A template inside a shell script is pasted into shell code (injection risk); "
                    "pass the value as a separate argument (\"$1\") or through 'env' instead"
                )
                out.append(Finding(f"/run/command/{index + 1}", "WR502", Severity.WARNING, message))
    return out
