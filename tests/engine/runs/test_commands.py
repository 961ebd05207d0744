"""One attempt of a command step (`commands.run_attempt`): the hook called last before the spawn
(the run's cancel check, which on Postgres waits for the previous step's result to be committed)
comes after the rendering, and no process starts when it raises — nor is a failure recorded
instead of it when the command cannot even be rendered."""

from __future__ import annotations

import sys

import pytest

from workrail_engine.runs.commands import AttemptSettings, run_attempt


class Cancelled(Exception):
    pass


def _attempt(tmp_path, command, before_spawn):
    step = {"id": "s", "run": {"command": command}}
    values = {"parameters": {"name": "made"}, "context": {}, "steps": {}}
    settings = AttemptSettings(project=tmp_path, allow_commands=True, grace=0.5)
    return run_attempt(step, values, [], settings, None, before_spawn=before_spawn)


def test_the_check_before_the_spawn_comes_after_the_rendering_and_keeps_the_process_from_starting(
    tmp_path,
):
    calls = []

    def cancelled() -> None:
        calls.append("checked")
        raise Cancelled

    touch = [sys.executable, "-c", "import sys; open(sys.argv[1], 'w').close()"]
    with pytest.raises(Cancelled):
        _attempt(tmp_path, [*touch, str(tmp_path / "{{parameters.name}}")], cancelled)
    assert calls == ["checked"]
    assert list(tmp_path.iterdir()) == []  # nothing ran

    outcome = _attempt(tmp_path, [*touch, str(tmp_path / "{{parameters.name}}")], lambda: None)
    assert outcome["status"] == "success", outcome
    assert (tmp_path / "made").exists()  # rendered before the spawn


def test_a_command_that_cannot_be_rendered_is_checked_too_before_its_failure(tmp_path):
    def cancelled() -> None:
        raise Cancelled

    with pytest.raises(Cancelled):
        _attempt(tmp_path, ["echo", "{{parameters.missing}}"], cancelled)
    failed = _attempt(tmp_path, ["echo", "{{parameters.missing}}"], lambda: None)
    assert failed["status"] == "failed" and "missing" in failed["error"], failed


def test_where_a_step_runs_is_checked_at_its_start(service, tmp_path):
    """The step before makes the step's directory a symlink out of the project: the step is
    refused (its directory is looked at when it starts, not when the run does)."""
    from workrail_engine.runs import RunOptions

    project = service.project
    (project / "work").mkdir(exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    swap = "import os, shutil, sys; shutil.rmtree('work'); os.symlink(sys.argv[1], 'work')"
    workflow = {
        "id": "swap-cwd",
        "name": "Swap the cwd",
        "steps": [
            {
                "id": "swap",
                "title": "swap",
                "run": {"command": [sys.executable, "-c", swap, str(outside)]},
            },
            {
                "id": "inside",
                "title": "inside",
                "run": {"command": [sys.executable, "-c", "open('made', 'w')"], "cwd": "work"},
            },
        ],
    }
    try:
        result = service.wait(service.run(workflow, {}, RunOptions()), 60)
        assert result["status"] == "failed", result
        assert "through a symlink" in str(result), result
        assert not (outside / "made").exists()
    finally:
        if (project / "work").is_symlink():
            (project / "work").unlink()


def test_secrets_are_read_as_each_attempt_starts(tmp_path, monkeypatch):
    shows = {
        "id": "shows",
        "run": {
            "command": [sys.executable, "-c", "import os; print(os.environ['TOKEN'] == 'new')"]
        },
    }
    environment = {"PATH": "/usr/bin:/bin"}
    settings = AttemptSettings(project=tmp_path, allow_commands=True, grace=0.5)
    values = {"parameters": {}, "context": {}, "steps": {}}

    def attempt():
        return run_attempt(shows, values, ["TOKEN"], settings, None, environment=environment)

    monkeypatch.setenv("TOKEN", "old")
    assert attempt()["output"]["stdout"] == "False\n"
    monkeypatch.setenv("TOKEN", "new")  # changed between two attempts of the same step object
    assert attempt()["output"]["stdout"] == "True\n"
