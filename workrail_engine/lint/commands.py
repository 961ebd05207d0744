"""Command steps: a timeout on each, and no templates handed to a shell's `-c` script."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..diagnostics import Diagnostic, Severity
from ..document import WorkflowDocument
from ..steps import StepSite

__all__ = ["command_diagnostics"]

_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "fish", "ash", "busybox"}


def command_diagnostics(doc: WorkflowDocument, sites: list[StepSite]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for site in sites:
        run = site.step.get("run") if site.kind == "command" else None
        if not isinstance(run, Mapping):
            continue
        if "timeoutSeconds" not in run:
            pointer = f"{site.pointer}/run"
            message = "Command step without 'timeoutSeconds': a hung command would hold the run until the overall deadline"
            out.append(Diagnostic("WR501", Severity.WARNING, message, pointer, doc.opening_span(pointer), data={"property": "timeoutSeconds"}))
        command = run.get("command")
        if isinstance(command, list):
            out.extend(_shell_script_templates(doc, site, command))
    return out


def _shell_script_templates(doc: WorkflowDocument, site: StepSite, command: list[object]) -> list[Diagnostic]:
    if not command or not isinstance(command[0], str) or os.path.basename(command[0]) not in _SHELLS:
        return []
    out = []
    for index, arg in enumerate(command[1:], start=1):
        if arg == "-c" and index + 1 < len(command):
            script = command[index + 1]
            if isinstance(script, str) and "{{" in script:
                pointer = f"{site.pointer}/run/command/{index + 1}"
                message = (
                    "A template inside a shell script is pasted into shell code (injection risk); "
                    "pass the value as a separate argument (\"$1\") or through 'env' instead"
                )
                out.append(Diagnostic("WR502", Severity.WARNING, message, pointer, doc.span(pointer)))
    return out
