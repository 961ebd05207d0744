"""ShellCheck on command steps' scripts (`workrail_engine/lint/shell_scripts.py`): which scripts,
where its findings land in JSON and YAML strings, and that a slow or hostile run costs a note.
The codes' bad and good cases are in test_lint_commands.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.engine.lint.lint_workflows import lint, mutate, set_at
from workrail_engine.lint import lint_text, shell_scripts
from workrail_engine.lint.fixes import fix_text

COMMAND = ["steps", 1, "run", "command"]


@pytest.mark.parametrize(
    ("command", "found"),
    [
        (["sh", "-c", "ls"], [("/run/command/2", "sh", "ls")]),
        (["/bin/bash", "-ec", "ls"], [("/run/command/2", "bash", "ls")]),
        (["bash", "script.sh"], []),  # a file, not a script
        (["zsh", "-c", "ls"], []),  # ShellCheck has no zsh
        (["python", "-c", "print()"], []),
    ],
)
def test_which_scripts_are_checked(command, found):
    assert shell_scripts.shell_scripts({"run": {"command": command}}, "command") == found


def test_a_finding_in_a_yaml_literal_block_sits_on_its_characters():
    text = (
        "id: demo\nname: Demo\nsteps:\n  - id: build\n    run:\n      timeoutSeconds: 9\n"
        "      command: [sh, -c, '']\n  - id: check\n    run:\n      timeoutSeconds: 9\n"
        "      command:\n        - sh\n        - -c\n        - |-\n"
        "          echo one\n            test -f $file_name && echo two\n"
    )
    result = lint_text(text, "demo.yaml")
    (found,) = [d for d in result.diagnostics if d.data.get("shellcheck") == "SC2086"]
    assert text[found.span.start : found.span.end] == "$file_name"


def _fake_shellcheck(tmp_path: Path, body: str) -> str:
    program = tmp_path / "shellcheck"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return str(program)


def test_a_slow_shellcheck_is_stopped_and_noted(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKRAIL_SHELLCHECK", _fake_shellcheck(tmp_path, "exec sleep 30"))
    monkeypatch.setattr(shell_scripts, "SHELLCHECK_TIMEOUT_SECONDS", 0.3)
    result = lint(mutate(set_at(COMMAND, ["sh", "-c", "echo slow-shellcheck-test"])))
    (note,) = [d for d in result.diagnostics if d.code == "WR504"]
    assert "took more than 0.3 s" in note.message
    assert result.errors == []


def test_the_script_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    lint(mutate(set_at(COMMAND, ["sh", "-c", f"touch {marker}"])))
    assert not marker.exists() and os.path.isdir(tmp_path)


@pytest.mark.parametrize(
    ("written", "fixed"),
    [
        pytest.param(
            "'echo ''hi''; test -f $nm'", "echo 'hi'; test -f \"$nm\"", id="single-quoted"
        ),
        pytest.param(
            '"echo \\"hi\\"; test -f $nm"', 'echo "hi"; test -f "$nm"', id="double-quoted"
        ),
        pytest.param("echo hi; test -f $nm", None, id="plain"),  # a quote could end it: no fix
    ],
)
def test_yaml_scalars_are_mapped_and_fixed_in_their_own_quoting(written, fixed):
    import yaml

    text = (
        "id: demo\nname: Demo\nsteps:\n  - id: build\n"
        f"    run: {{timeoutSeconds: 9, command: [sh, -c, {written}]}}\n"
    )
    result = lint_text(text, "demo.yaml")
    (found,) = [d for d in result.diagnostics if d.data.get("shellcheck") == "SC2086"]
    assert text[found.span.start : found.span.end] == "$nm"
    after = fix_text(text, "demo.yaml", unsafe=True).text
    script = yaml.safe_load(after)["steps"][0]["run"]["command"][2]
    assert script == (fixed or yaml.safe_load(text)["steps"][0]["run"]["command"][2])
