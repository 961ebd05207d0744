"""A session from the terminal: found with `workrail runs --search`, shown by `run-status`,
answered (exactly once) with `workrail continue`, cancelled with `workrail cancel`."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.cli.test_runs_cli import workrail
from tests.mcp.test_session_parity import SIZED_FLOW
from tests.mcp.test_sessions_mcp import FLOW

pytestmark = pytest.mark.slow


def _session(tmp_path, monkeypatch, workflow: dict, goal: str) -> tuple[Path, str]:
    """A session of ``workflow`` started in a project of its own (under WORKRAIL_HOME in
    ``tmp_path``): the project and the session's run id."""
    from workrail_engine.sessions import SessionService

    project = tmp_path / "project"
    (project / "workflows").mkdir(parents=True)
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path / "home"))
    sessions = SessionService()
    run_id = sessions.start(workflow, goal=goal, workspace=str(project)).run_id
    sessions.close()
    return project, run_id


def test_a_session_is_found_continued_and_cancelled_from_the_terminal(tmp_path, monkeypatch):
    project, run_id = _session(tmp_path, monkeypatch, FLOW, "rotate the signing keys")

    found = workrail(project, tmp_path, "runs", "--search", "signing keys")
    assert found.returncode == 0 and run_id in found.stdout and "at plan" in found.stdout
    listed = workrail(project, tmp_path, "runs", "--format", "json")
    assert [r["kind"] for r in json.loads(listed.stdout) if r["workflow_id"] == run_id] == [
        "session"
    ]
    status = workrail(project, tmp_path, "run-status", run_id)
    assert "waiting for the agent at step 'plan'" in status.stdout
    assert "session of session-flow pinned at sha256:" in status.stdout  # its version
    assert f"workrail continue {run_id} --step 1 --output" in status.stdout

    blocked = workrail(project, tmp_path, "continue", run_id, "--step", "1", "--output", "x")
    assert blocked.returncode == 1 and "Start with PLAN" in blocked.stdout
    done = workrail(project, tmp_path, "continue", run_id, "--step", "1", "--output", "PLAN: go")
    assert done.returncode == 0, done.stderr
    assert "waiting for the agent at step 'ship'" in done.stdout
    again = workrail(project, tmp_path, "continue", run_id, "--step", "1", "--output", "PLAN: go")
    assert again.returncode == 0 and "applied before" in again.stderr
    other = workrail(project, tmp_path, "continue", run_id, "--step", "1", "--output", "PLAN: no")
    assert other.returncode == 1 and "answer not applied" in other.stderr
    assert "waits on step 'ship'" in other.stderr
    cancelled = workrail(project, tmp_path, "cancel", run_id)
    assert cancelled.returncode == 0 and "cancelled" in cancelled.stdout
    assert (
        json.loads(workrail(project, tmp_path, "run-status", run_id, "--format", "json").stdout)[
            "status"
        ]
        == "cancelled"
    )


def test_a_blocked_answer_shows_the_command_that_passes_and_it_does(tmp_path, monkeypatch):
    project, run_id = _session(tmp_path, monkeypatch, FLOW, "rotate the keys")

    blocked = workrail(project, tmp_path, "continue", run_id, "--step", "1", "--output", "x")
    assert blocked.returncode == 1, blocked
    shown = blocked.stdout.split("Send instead: ", 1)[1].strip()
    command = shlex.split(shown)  # the line as a shell reads it, the notes' newline included
    assert command[:5] == ["workrail", "continue", run_id, "--step", "1"]
    retried = workrail(project, tmp_path, *command[1:])
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "waiting for the agent at step 'ship'" in retried.stdout


def test_a_blocked_context_value_shows_the_command_with_a_placeholder_to_fill(
    tmp_path, monkeypatch
):
    """A value the engine cannot pick (a declared context variable the step `sets`): the command
    carries a placeholder for it, saying what it must be; filled, it passes."""
    project, run_id = _session(tmp_path, monkeypatch, SIZED_FLOW, "size it")

    answer = ["continue", run_id, "--step", "1", "--output", "Sized.", "--context", "owner=ana"]
    blocked = workrail(project, tmp_path, *answer)
    assert blocked.returncode == 1, blocked
    assert "context.taskSize is not set: step 'size' asks the answer to set it" in blocked.stdout
    shown, fill = blocked.stdout.split("Send instead: ", 1)[1].strip().split("\n")
    command = shlex.split(shown)
    placeholder = 'taskSize=<one of "small", "large">'
    assert command[1:] == [*answer[:6], "--context", "owner=ana", "--context", placeholder]
    assert fill.strip() == "replacing each <…> by a value it allows: taskSize"
    command[-1] = "taskSize=large"
    retried = workrail(project, tmp_path, *command[1:])
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "waiting for the agent at step 'work'" in retried.stdout
