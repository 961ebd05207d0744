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


def test_a_command_is_prepared_only_without_templates_and_used_only_for_its_own_step(tmp_path):
    from workrail_engine.runs.commands import prepare_command
    from workrail_engine.runs.secrets import SecretSet

    secrets, environment = SecretSet({}), {"PATH": "/usr/bin:/bin"}
    templated = {"id": "t", "run": {"command": ["echo", "{{parameters.name}}"]}}
    assert prepare_command(templated, secrets, environment) is None
    with_env = {"id": "e", "run": {"command": ["echo"], "env": {"X": "{{parameters.name}}"}}}
    assert prepare_command(with_env, secrets, environment) is None

    says = {"id": "a", "run": {"command": [sys.executable, "-c", "print('a')"]}}
    other = {"id": "b", "run": {"command": [sys.executable, "-c", "print('b')"]}}
    prepared = prepare_command(says, secrets, environment)
    assert prepared is not None and prepared.argv == says["run"]["command"]
    values = {"parameters": {}, "context": {}, "steps": {}}
    settings = AttemptSettings(project=tmp_path, allow_commands=True, grace=0.5)

    def attempt(step):
        return run_attempt(
            step,
            values,
            [],
            settings,
            None,
            environment=environment,
            prepared=prepared,
        )

    assert attempt(says)["output"]["stdout"] == "a\n"
    assert attempt(other)["output"]["stdout"] == "b\n"  # not the prepared one
    equal = {"id": "a", "run": {"command": [sys.executable, "-c", "print('a')"]}}
    said = attempt(equal)  # an equal step is rendered again (the same output, the long way)
    assert said["output"]["stdout"] == "a\n"


def test_where_a_prepared_step_runs_is_checked_at_its_start(service, tmp_path):
    """The step before makes the step's directory a symlink out of the project: the step is
    refused (its command was prepared while the step before ran; its cwd is not)."""
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


def test_a_command_prepared_with_other_secret_values_is_made_again(tmp_path, monkeypatch):
    """Secrets are read from the environment as each step starts: a command prepared while the
    step before ran, when a secret had another value, is not used."""
    from workrail_engine.runs.commands import prepare_command
    from workrail_engine.runs.secrets import SecretSet

    shows = {
        "id": "shows",
        "run": {
            "command": [sys.executable, "-c", "import os; print(os.environ['TOKEN'] == 'new')"]
        },
    }
    environment = {"PATH": "/usr/bin:/bin"}
    prepared = prepare_command(shows, SecretSet({"TOKEN": "old"}), environment)
    monkeypatch.setenv("TOKEN", "new")
    settings = AttemptSettings(project=tmp_path, allow_commands=True, grace=0.5)
    values = {"parameters": {}, "context": {}, "steps": {}}
    outcome = run_attempt(
        shows, values, ["TOKEN"], settings, None, environment=environment, prepared=prepared
    )
    assert outcome["output"]["stdout"] == "True\n", outcome
