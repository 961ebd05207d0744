"""Running a command with real subprocesses: exit codes, JSON stdout, caps, timeouts, cancel, groups."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from workrail_engine.errors import SecurityViolation
from workrail_engine.runs.command_process import STDOUT_CAP, CommandSpec, run_command
from workrail_engine.runs.secrets import SecretSet
from workrail_engine.runs.workspace import SandboxUnavailable, check_sandbox, resolve_cwd

PY = sys.executable


def spec(tmp_path: Path, code: str, **kw) -> CommandSpec:
    return CommandSpec([PY, "-c", code], tmp_path, {"PATH": os.environ["PATH"]}, **kw)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie waiting for its reaper counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_exit_code_json_stdout_and_stderr_tail(tmp_path):
    out = run_command(
        spec(
            tmp_path,
            "import sys, json; print(json.dumps({'n': 1})); print('bad', file=sys.stderr); sys.exit(3)",
        )
    )
    assert out.exit_code == 3 and not out.ok
    assert out.output()["stdout"] == {"n": 1}
    assert out.output()["stderr"] == "bad\n"


def test_each_step_reads_dev_null_and_inherits_no_other_descriptor(tmp_path):
    # stdin is a descriptor the engine holds open across steps: every step gets /dev/null at 0,
    # at its end of file at once, and nothing of the engine's beyond 0, 1 and 2
    code = (
        "import json, os, sys; "
        "print(json.dumps([os.readlink('/proc/self/fd/0'), sys.stdin.read(), "
        "sorted(int(fd) for fd in os.listdir('/proc/self/fd'))]))"
    )
    for _ in range(2):
        out = run_command(spec(tmp_path, code), cancel=None)
        assert out.exit_code == 0, out
        stdin, read, descriptors = out.output()["stdout"]
        assert (stdin, read) == ("/dev/null", "")
        assert set(descriptors) - {0, 1, 2} <= {max(descriptors)}  # listdir's own, if listed


def open_descriptors() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def test_the_engine_keeps_no_descriptor_of_a_steps_pipes_once_it_ends(tmp_path):
    # The engine makes each step's pipes itself (`_spawn`): every end is closed when the step
    # ends — one that wrote to both and exited, and one killed at its timeout mid-read.
    # (After a first step: the engine holds /dev/null and its children's list open from then on.)
    run_command(spec(tmp_path, "pass"))
    before = open_descriptors()
    out = run_command(spec(tmp_path, "import sys; print('out'); print('err', file=sys.stderr)"))
    assert (out.exit_code, out.stdout, out.stderr_tail) == (0, "out\n", "err\n")
    assert open_descriptors() == before
    out = run_command(
        spec(tmp_path, "import time; print('x' * 200_000); time.sleep(60)", timeout=0.3, grace=0.1)
    )
    assert out.timed_out and out.stdout_truncated is False and len(out.stdout) > 65536
    assert open_descriptors() == before


def test_plain_stdout_stays_text(tmp_path):
    assert run_command(spec(tmp_path, "print('hello')")).output()["stdout"] == "hello\n"


@pytest.mark.parametrize("depth", [65, 200_000])
def test_json_stdout_nested_past_the_limit_stays_text(tmp_path, depth):
    # 65: one past the engine's nesting limit; 200,000: past what Python's JSON decoder can hold.
    out = run_command(spec(tmp_path, f"print('[' * {depth} + ']' * {depth})"))
    assert out.ok and out.output()["stdout"] == "[" * depth + "]" * depth + "\n"
    shallow = run_command(spec(tmp_path, "print('[' * 64 + ']' * 64)"))
    assert isinstance(shallow.output()["stdout"], list)


def test_stdout_is_capped(tmp_path):
    out = run_command(spec(tmp_path, f"import sys; sys.stdout.write('x' * {STDOUT_CAP + 5000})"))
    assert out.ok and out.stdout_truncated and len(out.stdout) == STDOUT_CAP


def test_missing_program_is_an_outcome_not_an_exception(tmp_path):
    out = run_command(CommandSpec(["no-such-program-xyz"], tmp_path, {"PATH": "/usr/bin"}))
    assert out.exit_code is None and "cannot start" in out.error


def test_argv_is_not_a_shell(tmp_path):
    marker = tmp_path / "pwned"
    out = run_command(
        CommandSpec(["echo", f"; touch {marker}"], tmp_path, {"PATH": os.environ["PATH"]})
    )
    assert out.stdout.strip() == f"; touch {marker}" and not marker.exists()


def test_timeout_kills_a_grandchild_that_ignores_sigterm(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    stubborn = tmp_path / "stubborn.py"
    stubborn.write_text(
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "time.sleep(60)\n"
    )
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, {str(stubborn)!r}, {str(pidfile)!r}])\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    out = run_command(spec(tmp_path, code, timeout=1.0, grace=0.5))
    elapsed = time.monotonic() - started
    assert out.timed_out and "timed out" in out.error
    assert elapsed < 5, elapsed
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


def test_cancel_flag_stops_the_group(tmp_path):
    flag = threading.Event()
    threading.Timer(0.5, flag.set).start()
    started = time.monotonic()
    out = run_command(spec(tmp_path, "import time; time.sleep(60)", grace=0.5), cancel=flag)
    assert out.cancelled and time.monotonic() - started < 5


def test_background_leftovers_do_not_outlive_the_step(tmp_path):
    pidfile = tmp_path / "bg.pid"
    code = (
        "import subprocess, sys\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], stdout=subprocess.DEVNULL)\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
    )
    out = run_command(spec(tmp_path, code, grace=0.5))
    assert out.exit_code == 0
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_secret_masking_everywhere():
    secrets = SecretSet({"TOKEN": "s3cr3t-value", "OTHER": "s3cr3t"})
    masked = secrets.mask({"stdout": "a s3cr3t-value b s3cr3t", "list": ["s3cr3t-value"], "n": 3})
    assert masked == {"stdout": "a *** b ***", "list": ["***"], "n": 3}


def test_secrets_come_from_declared_names_only():
    secrets = SecretSet.from_environment(["A"], {"A": "1", "B": "2"})
    assert secrets.values == {"A": "1"}


@pytest.mark.parametrize("cwd", ["../elsewhere", "/etc", "sub/../../x"])
def test_cwd_cannot_leave_the_project(tmp_path, cwd):
    with pytest.raises(SecurityViolation):
        resolve_cwd(tmp_path, cwd)


def test_cwd_symlink_escape_is_refused(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "link").symlink_to(tmp_path)
    with pytest.raises(SecurityViolation, match="leaves the project"):
        resolve_cwd(project, "link")
    (project / "sub").mkdir()
    assert resolve_cwd(project, "sub") == (project / "sub").resolve()


def test_sandbox_unavailable_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap here
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        check_sandbox()


def test_log_lines_are_masked(caplog):
    import logging

    from workrail_engine.runs.secrets import MaskingFilter

    SecretSet({"LOGGED": "log-secret-42"})
    logger = logging.getLogger("workrail-test-masking")
    caplog.handler.addFilter(MaskingFilter())
    logger.warning("token is %s", "log-secret-42")
    assert caplog.records[-1].getMessage() == "token is ***"


# The engine, in a process of its own (with or without a controlling terminal), runs one step that
# tells where it runs: its session and group, and whether it can open the terminal.
_ENGINE = """
import json, sys
from pathlib import Path
from workrail_engine.runs.command_process import CommandSpec, run_command
probe = (
    "import os, json\\n"
    "try:\\n    os.close(os.open('/dev/tty', os.O_RDWR | os.O_NOCTTY)); tty = True\\n"
    "except OSError:\\n    tty = False\\n"
    "print(json.dumps([os.getpid(), os.getpgid(0), os.getsid(0), tty]))"
)
def tell(label):
    out = run_command(CommandSpec([sys.executable, "-c", probe], Path.cwd(), {}))
    pid, group, session, tty = out.output()["stdout"]
    print(label + " " + json.dumps({"own_group": group == pid, "own_session": session == pid,
          "engine_session": session == __import__("os").getsid(0), "tty": tty}), flush=True)
tell("STEP")
"""
# ... then forks, and the forked engine leaves the terminal's session (``setsid``) before its own
# step: what a process's steps get is found anew in a forked process, not taken from its parent.
_ENGINE_FORKED = (
    _ENGINE
    + """
import os
child = os.fork()
if child == 0:
    os.setsid()
    tell("FORKED")
    os._exit(0)
os.waitpid(child, 0)
"""
)


def _engine_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])}


def test_a_step_of_an_engine_without_a_terminal_has_its_own_group_in_the_engines_session(
    tmp_path,
):
    # No controlling terminal for the engine (a session of its own, as an MCP server or CI has):
    # the step gets a process group of its own and no session — a new session would put it in a
    # scheduler autogroup of its own, ≈ 0.5 ms a spawn (docs/benchmarks.md).
    done = subprocess.run(
        [PY, "-c", _ENGINE],
        cwd=tmp_path,
        env=_engine_env(),
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
        check=True,
    )
    step = json.loads(done.stdout.split("STEP ", 1)[1])
    assert step == {"own_group": True, "own_session": False, "engine_session": True, "tty": False}


def _in_a_terminal(tmp_path: Path, engine: str, last: bytes) -> str:
    """What ``engine`` prints, run with a pseudo-terminal as its controlling terminal (as
    `workrail run` in a shell), up to the line that starts with ``last``."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the engine, with the pty as its controlling terminal
        os.chdir(tmp_path)
        os.execve(PY, [PY, "-c", engine], _engine_env())
    output = b""
    deadline = time.monotonic() + 60
    while last + b" " not in output or not output.endswith(b"\n"):
        assert time.monotonic() < deadline, output
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the engine exited and closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.waitpid(pid, 0)
    os.close(fd)
    return output.decode()


def _told(output: str, label: str) -> dict[str, bool]:
    told: dict[str, bool] = json.loads(output.split(label + " ", 1)[1].splitlines()[0])
    return told


def test_a_step_of_an_engine_in_a_terminal_gets_a_session_of_its_own_and_no_terminal(tmp_path):
    # The step must not reach the engine's terminal, so it gets a session of its own.
    step = _told(_in_a_terminal(tmp_path, _ENGINE, b"STEP"), "STEP")
    assert step == {"own_group": True, "own_session": True, "engine_session": False, "tty": False}


def test_a_forked_engine_without_the_terminal_gives_its_steps_no_session_of_their_own(tmp_path):
    # The parent's steps got sessions of their own (it has a terminal); the forked engine, out of
    # the terminal's session, finds for itself that it has none: a group of its own for its step.
    output = _in_a_terminal(tmp_path, _ENGINE_FORKED, b"FORKED")
    assert _told(output, "STEP")["own_session"] is True
    step = _told(output, "FORKED")
    assert step == {"own_group": True, "own_session": False, "engine_session": True, "tty": False}
