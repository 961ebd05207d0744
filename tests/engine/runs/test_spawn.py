"""A step's main process started both ways — ``os.posix_spawn`` (the step runs in the engine's
working directory) and ``subprocess.Popen`` (anywhere else) — with the same result: its own
process group, exactly its environment, stdin from /dev/null, no descriptor of the engine,
SIGPIPE and SIGXFSZ back to their default, the program looked up in the step's PATH."""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from pathlib import Path

import pytest

from workrail_engine.runs import spawn as spawn_module
from workrail_engine.runs.spawn import Spawned, spawn

PROBE = """
import json, os, signal, sys
print(json.dumps({
    "own_group": os.getpgid(0) == os.getpid(),
    "session": os.getsid(0),
    "cwd": os.getcwd(),
    "env": dict(os.environ),
    "stdin": sys.stdin.buffer.read().decode(),
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
}))
"""


@pytest.fixture(params=["posix_spawn", "popen"])
def way(request, monkeypatch, tmp_path):
    """Where the step runs, and a check that it was started the way the case says."""
    calls = []
    real = os.posix_spawn

    def posix_spawn(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(spawn_module.os, "posix_spawn", posix_spawn)
    if request.param == "posix_spawn":
        monkeypatch.chdir(tmp_path)
    yield request.param
    assert bool(calls) == (request.param == "posix_spawn"), calls


def output(proc: Spawned) -> tuple[bytes, bytes]:
    """Both pipes to their end, then the process waited for."""
    chunks: dict[int, list[bytes]] = {proc.stdout: [], proc.stderr: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    open_fds = set(chunks)
    while open_fds:
        for fd, _ in poller.poll(5000):
            data = os.read(fd, 65536)
            if data:
                chunks[fd].append(data)
            else:
                poller.unregister(fd)
                open_fds.discard(fd)
                os.close(fd)
    proc.wait()
    return b"".join(chunks[proc.stdout]), b"".join(chunks[proc.stderr])


def test_the_step_gets_its_group_its_environment_and_nothing_of_the_engine(way, tmp_path):
    leaked = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(leaked, True)  # as a C library might leave one
    try:
        env = {"PATH": os.environ["PATH"], "ONLY_THIS": "1"}
        proc = spawn([sys.executable, "-c", PROBE], tmp_path.resolve(), env, new_session=False)
        stdout, stderr = output(proc)
    finally:
        os.close(leaked)
    assert proc.returncode == 0, stderr
    seen = json.loads(stdout)
    assert seen["own_group"] is True
    assert seen["session"] == os.getsid(0)
    assert seen["cwd"] == str(tmp_path.resolve())
    assert {k: v for k, v in seen["env"].items() if k != "LC_CTYPE"} == env
    assert seen["stdin"] == ""
    assert leaked not in seen["fds"]
    assert seen["fds"][:3] == [0, 1, 2] and len(seen["fds"]) <= 4  # + the listing's own


def test_signals_python_ignores_are_back_to_their_default(way, tmp_path):
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN  # the engine's, as Python sets it
    proc = spawn(
        ["cat", "/proc/self/status"], tmp_path.resolve(), dict(os.environ), new_session=False
    )
    status = output(proc)[0].decode()
    ignored = int(
        next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16
    )
    assert not ignored & (1 << (signal.SIGPIPE - 1))
    assert not ignored & (1 << (signal.SIGXFSZ - 1))


def test_a_session_of_its_own_when_asked(way, tmp_path):
    proc = spawn(
        [sys.executable, "-c", PROBE], tmp_path.resolve(), dict(os.environ), new_session=True
    )
    stdout, _ = output(proc)
    assert json.loads(stdout)["session"] == proc.pid


def test_the_program_is_looked_up_in_the_steps_path(way, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "say-hello"
    program.write_text("#!/bin/sh\necho hello from the PATH of the step\n")
    program.chmod(0o755)
    (bin_dir / "not-executable").write_text("#!/bin/sh\necho no\n")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    proc = spawn(["say-hello"], tmp_path.resolve(), env, new_session=False)
    assert output(proc)[0] == b"hello from the PATH of the step\n"
    # not in the engine's own PATH, nor found without one
    with pytest.raises(FileNotFoundError):
        spawn(["say-hello"], tmp_path.resolve(), {"PATH": "/usr/bin:/bin"}, new_session=False)


def test_a_missing_program_raises_and_leaves_no_descriptor(way, tmp_path):
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError):
        spawn(["no-such-program-xyz"], tmp_path.resolve(), {"PATH": "/usr/bin"}, new_session=False)
    with pytest.raises(OSError):
        spawn([str(tmp_path / "nothing-here")], tmp_path.resolve(), {}, new_session=False)
    assert set(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize(("script", "code"), [("exit 3", 3), ("kill -TERM $$", -signal.SIGTERM)])
def test_exit_status_as_popen_reports_it(way, tmp_path, script, code):
    proc = spawn(["sh", "-c", script], tmp_path.resolve(), dict(os.environ), new_session=False)
    output(proc)
    assert proc.returncode == code
    assert proc.poll() == code


def test_poll_says_none_while_it_runs(way, tmp_path):
    proc = spawn(["sleep", "5"], tmp_path.resolve(), dict(os.environ), new_session=False)
    try:
        assert proc.poll() is None
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        output(proc)
    assert proc.returncode == -signal.SIGKILL


def test_a_relative_program_runs_from_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("tool").write_text("#!/bin/sh\necho relative\n")
    Path("tool").chmod(0o755)
    proc = spawn(["./tool"], tmp_path.resolve(), {}, new_session=False)
    assert output(proc)[0] == b"relative\n"
