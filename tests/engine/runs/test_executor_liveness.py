"""The log of an executor's live steps (``executors/<id>.pgids``) and what a successor does with it:
a step is logged by its token before its spawn, so an engine killed between the spawn and the
line of its process group still leaves a step its successor finds and stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from workrail_engine.runs import step_processes
from workrail_engine.runs.command_process import CommandSpec, run_command
from workrail_engine.runs.executor_liveness import (
    ExecutorLock,
    InFlight,
    dead_executors,
    stop_orphans,
)

PY = sys.executable


@pytest.fixture
def token():
    """A step token no other test uses; a process still carrying it afterwards is killed."""
    value = f"test-{uuid.uuid4().hex}"
    yield value
    for pid in step_processes.step_processes([value]):
        os.kill(pid, signal.SIGKILL)


def _escapee(token: str) -> subprocess.Popen[bytes]:
    """A step's process as a dead engine leaves it: a session of its own, the step's token."""
    return subprocess.Popen(
        ["sleep", "1000"],
        env={"PATH": os.environ["PATH"], step_processes.ENV_NAME: token},
        start_new_session=True,
    )


def _gone(proc: subprocess.Popen[bytes], seconds: float = 5) -> bool:
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_a_step_logged_before_its_spawn_and_never_after_is_stopped_by_the_successor(
    tmp_path, token
):
    # The engine died between the spawn and the `+` line: only the `?` line names the step.
    dead = ExecutorLock(tmp_path)
    InFlight(dead).expect(token)
    escapee = _escapee(token)
    os.close(dead._fd)  # the dead process's lock goes with it
    assert dead_executors(tmp_path, "someone-else") == [dead.executor_id]
    stop_orphans(tmp_path, [dead.executor_id])
    assert _gone(escapee), "the step's process outlived the recovery"
    assert not dead.path.with_suffix(".pgids").exists()


def test_a_spawned_and_ended_step_is_left_alone(tmp_path, token):
    """A token whose group was logged and ended: nothing of that step is looked for again (a
    process holding the token now is no step of the dead engine's; here, a stand-in)."""
    dead = ExecutorLock(tmp_path)
    log = dead.path.with_suffix(".pgids")
    log.write_text(f"?{token}\n+999999 {token}\n-999999\n")
    bystander = _escapee(token)
    try:
        stop_orphans(tmp_path, [dead.executor_id])
        assert not _gone(bystander, 0.3)
    finally:
        bystander.kill()
        bystander.wait()


def test_an_exit_kills_a_step_whose_spawn_was_under_way(tmp_path, token):
    groups = InFlight(ExecutorLock(tmp_path))
    groups.expect(token)
    escapee = _escapee(token)
    groups.kill_all()
    assert _gone(escapee)


class _Told:
    """What a `StepGroups` is told, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def expect(self, token: str) -> None:
        # before the spawn: no process holds the token yet
        self.calls.append(("expect", token, step_processes.step_processes([token])))

    def add(self, pgid: int, token: str) -> None:
        self.calls.append(("add", pgid, token))

    def not_spawned(self, token: str) -> None:
        self.calls.append(("not_spawned", token))

    def ended(self, pgid: int) -> None:
        self.calls.append(("ended", pgid))


def test_the_token_is_told_before_the_spawn_and_the_group_after(tmp_path):
    told = _Told()
    code = f"import os; print(os.environ[{step_processes.ENV_NAME!r}], os.getpid())"
    outcome = run_command(
        CommandSpec([PY, "-c", code], tmp_path, {"PATH": os.environ["PATH"]}),
        groups=told,
        before_spawn=lambda: told.calls.append(("before_spawn",)),
    )
    token, pid = outcome.stdout.split()
    assert told.calls == [
        ("before_spawn",),
        ("expect", token, set()),
        ("add", int(pid), token),
        ("ended", int(pid)),
    ]


def test_a_spawn_that_fails_is_told_so(tmp_path):
    told = _Told()
    outcome = run_command(
        CommandSpec([str(tmp_path / "no-such-program")], tmp_path, {"PATH": "/nonexistent"}),
        groups=told,
    )
    assert outcome.exit_code is None and "cannot start" in (outcome.error or "")
    assert [call[0] for call in told.calls] == ["expect", "not_spawned"]
    assert told.calls[0][1] == told.calls[1][1]
