"""Running one command: argv only, its own session, killed as a group, output captured with caps.

Why not ``subprocess.run(timeout=)``: it kills only the direct child, and a grandchild that keeps
the pipe open makes it hang. Each command here starts in a process group of its own (Popen's own
options — not ``preexec_fn``, which can deadlock in a threaded server), so the whole tree shares
one group; on timeout or cancel the group gets SIGTERM, a grace period, then SIGKILL. When the
main process exits, anything it left behind in its group is stopped the same way, so a step's
background processes never outlive it and never hold its pipes.

A new process group, or a new session as well? A session of its own is what keeps a command away
from the engine's controlling terminal (``/dev/tty`` cannot be opened; a read from the terminal
would otherwise stop a background group with SIGTTIN until its timeout). But ``setsid`` also puts
the process in a scheduler autogroup of its own where the kernel has them (Linux's
``sched_autogroup_enabled``, on by default in most distributions): on the 2-core machine of
docs/benchmarks.md that cost ≈ 0.5 ms of wall time per spawn of ``true`` and no CPU — a step's
whole budget over the bare spawn. So a step gets a new session only when the engine has a
controlling terminal to keep from it (a `workrail run` in a terminal); an engine without one (an
MCP server, a worker, CI) starts its steps in a new process group only (``process_group=0``),
which isolates them as well: without a session leader holding a terminal, no process of the
session can acquire one.

A process that left the group (``setsid``) is found by the step's token (`step_processes`) and
stopped with the group. The timeout and the cancel never wait for the pipes to close: once the
grace period is over, whatever still holds them, the step ends.

Secrets are masked in the output as it is read, before the caps cut it (a secret cut in two by
the stdout cap or the stderr tail would leave a fragment no later mask could recognise), and
across reads (a secret split between two reads of the pipe is still masked whole).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..limits import nesting_exceeded
from . import step_processes
from .secrets import StreamMask
from .while_running import WhileRunning

__all__ = [
    "STDERR_TAIL",
    "STDOUT_CAP",
    "CommandOutcome",
    "CommandSpec",
    "StepGroups",
    "run_command",
]

STDOUT_CAP = 1 << 20  # bytes of stdout kept (the head)
STDERR_TAIL = 8 << 10  # bytes of stderr kept (the tail, where errors are)
_TICK = 0.05  # how often a waiting loop looks at the clock and the cancel flag
# After the SIGKILL, how long the pipes may stay open (held by a process that could not be found)
# before the step stops reading them and ends.
_PIPE_GRACE = 0.5


# Not frozen, though never changed after it is made: made at every attempt, and a frozen
# dataclass's __init__ cost a step of `true` 13,000 instructions where this costs 5,000.
@dataclass(slots=True)
class CommandSpec:
    argv: list[str]
    cwd: Path
    env: Mapping[str, str]
    timeout: float | None = None  # seconds; None: no limit
    grace: float = 2.0  # seconds between SIGTERM and SIGKILL
    secrets: tuple[str, ...] = ()  # values masked in stdout and stderr as they are read


class StepGroups(Protocol):
    """Who keeps the list of live steps (so that a successor can stop them if this process
    dies): told a step's token before its spawn, its process group once it is spawned, and the
    group's end — or that the spawn failed."""

    def expect(self, token: str) -> None: ...
    def add(self, pgid: int, token: str) -> None: ...
    def not_spawned(self, token: str) -> None: ...
    def ended(self, pgid: int) -> None: ...


@dataclass
class CommandOutcome:
    exit_code: int | None  # None when the process could not be started or was killed
    stdout: str = ""
    stderr_tail: str = ""
    duration: float = 0.0
    timed_out: bool = False
    cancelled: bool = False
    stdout_truncated: bool = False
    error: str | None = None  # why it failed to start, or was stopped
    signal: int | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.cancelled)

    def output(self) -> dict[str, Any]:
        """The step output: exit code, stdout (parsed when it is JSON), stderr tail, duration."""
        out: dict[str, Any] = {
            "exit_code": self.exit_code,
            "stdout": _parsed(self.stdout, self.stdout_truncated),
            "stderr": self.stderr_tail,
            "duration": round(self.duration, 4),
        }
        if self.stdout_truncated:
            out["stdout_truncated"] = True
        if self.signal is not None:
            out["signal"] = self.signal
        if self.timed_out:
            out["timed_out"] = True
        if self.cancelled:
            out["cancelled"] = True
        if self.error:
            out["error"] = self.error
        return out


def _parsed(stdout: str, truncated: bool) -> Any:
    """A step's JSON output as a value, else its text. JSON nested past the engine's limit stays
    text: as a value it could not be checked, stored or returned as every other result is."""
    text = stdout.strip()
    if text and not truncated:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return stdout
        if nesting_exceeded(value) is None:
            return value
    return stdout


class _Capture:
    """A step's output as it is read: stdout's head, stderr's tail, each masked as it comes."""

    # A plain class with slots, made at every step: the dataclass with two field factories and
    # a `__post_init__` cost a step of `true` ≈ 40 Python opcodes more.
    __slots__ = ("masks", "stderr", "stdout", "truncated")

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.truncated = False
        # none without secrets: nothing to hold back or replace (a step's output is kept as read)
        self.masks = {True: StreamMask(secrets), False: StreamMask(secrets)} if secrets else None

    def add(self, is_stdout: bool, data: bytes) -> None:
        self._keep(is_stdout, data if self.masks is None else self.masks[is_stdout].feed(data))

    def end(self, is_stdout: bool) -> None:
        if self.masks is not None:
            self._keep(is_stdout, self.masks[is_stdout].flush())

    def _keep(self, is_stdout: bool, data: bytes) -> None:
        if is_stdout:
            room = STDOUT_CAP - len(self.stdout)
            if len(data) > room:
                self.truncated = True
            self.stdout += data[: max(room, 0)]
        else:
            self.stderr += data
            if len(self.stderr) > 2 * STDERR_TAIL:
                del self.stderr[: len(self.stderr) - STDERR_TAIL]


try:  # the C function itself: see `_group_alive`
    _killpg: Callable[[int, int], int] | None = ctypes.CDLL(None, use_errno=True).killpg
except (OSError, AttributeError):
    _killpg = None


def _group_alive(pgid: int) -> bool:
    # Asked at every step's end, when the group is almost always gone: ``os.killpg`` says so by
    # raising ProcessLookupError (≈ 5 µs a step of `true` on the way to the next spawn), the C
    # function by returning -1 with ESRCH.
    if _killpg is not None:
        return _killpg(pgid, 0) == 0 or ctypes.get_errno() != errno.ESRCH
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class _Stopper:
    """SIGTERM to the step's processes now (its group, and those that left it), SIGKILL once the
    grace period is over."""

    def __init__(self, pgid: int, token: str, grace: float) -> None:
        self.pgid, self.token, self.grace = pgid, token, grace
        self.kill_at: float | None = None

    def _signal(self, sig: int) -> None:
        _signal_group(self.pgid, sig)
        step_processes.signal_all(step_processes.step_processes([self.token], [self.pgid]), sig)

    def start(self) -> None:
        if self.kill_at is None:
            self._signal(signal.SIGTERM)
            self.kill_at = time.monotonic() + self.grace

    def tick(self) -> None:
        if self.kill_at is not None and time.monotonic() >= self.kill_at:
            self._signal(signal.SIGKILL)

    def gave_up_on_pipes(self) -> bool:
        """Killed, and the grace for the pipes is over: stop reading them."""
        return self.kill_at is not None and time.monotonic() >= self.kill_at + _PIPE_GRACE

    def finish(self, proc: subprocess.Popen[bytes]) -> None:
        """After the main process is gone: stop what is left of its group, within the grace
        (what escaped the group is `step_processes.ended`'s)."""
        if _group_alive(self.pgid):
            self.start()
            while _group_alive(self.pgid) and time.monotonic() < (self.kill_at or 0):
                time.sleep(_TICK / 5)
            _signal_group(self.pgid, signal.SIGKILL)
            proc.poll()


def _has_controlling_terminal() -> bool:
    """Whether this process has a controlling terminal; asked once per process
    (`_process_options`: the question costs ≈ 0.01–0.02 ms, a tenth of a step's budget). A
    process without one gains one only as a session leader opening a terminal, which the engine
    never does; one that loses it later (``setsid``) keeps giving its steps sessions of their
    own: slower, as isolated."""
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC))
    except OSError:  # ENXIO: none
        return False
    return True


def _stdin() -> int:
    """/dev/null, as every step's stdin: opened once per process (``subprocess.DEVNULL`` opens
    and closes it at every spawn, two system calls between a step's result and the next
    spawn). Close-on-exec: only the steps' stdin (a copy made in the child) reaches them."""
    return step_processes.held_descriptor(os.devnull, os.O_RDWR)


_options: tuple[int, dict[str, Any]] | None = None  # (pid, `_process_options` of that process)


def _process_options() -> dict[str, Any]:
    """What `_spawn` hands ``Popen`` alike at every step of this process, found at its first
    (a forked process finds its own; asked at every step, so one call where it was four): the
    process made its steps' subreaper, a group of its own for each step, and a session of its
    own only where there is a terminal to keep from it (the module's docstring says why)."""
    global _options
    pid = os.getpid()
    if _options is None or _options[0] != pid:
        step_processes.become_subreaper()
        apart: dict[str, Any] = (
            {"start_new_session": True} if _has_controlling_terminal() else {"process_group": 0}
        )
        _options = (pid, {**apart, "stdin": _stdin(), "close_fds": True})
    return _options[1]


def _spawn(spec: CommandSpec, token: str) -> tuple[subprocess.Popen[bytes], int, int]:
    """The step's process, and the read ends of its stdout and stderr pipes (the caller's to
    close).

    The pipes are made here and handed to ``Popen`` as descriptors, not ``subprocess.PIPE``:
    ``Popen`` would wrap each read end in a buffered file object the engine never reads through
    (it reads the descriptors, `_pump`) — ≈ 20 µs of a step of `true` between one step's result
    and the next step's process. Both pipes are close-on-exec (Python's default): only the
    child's copies, made by ``Popen`` in the child, reach the step."""
    options = _process_options()
    out_read, out_write = os.pipe()
    try:
        err_read, err_write = os.pipe()
    except OSError:
        os.close(out_read)
        os.close(out_write)
        raise
    try:
        with step_processes.spawning() as spawning:
            proc = subprocess.Popen(
                spec.argv,
                cwd=spec.cwd,
                env={**spec.env, step_processes.ENV_NAME: token},
                stdout=out_write,
                stderr=err_write,
                **options,
            )
            spawning.started(proc.pid)
    except BaseException:
        os.close(out_read)
        os.close(err_read)
        raise
    finally:
        # the child's ends: the pipes close when the step's processes have closed theirs
        os.close(out_write)
        os.close(err_write)
    return proc, out_read, err_read


def run_command(
    spec: CommandSpec,
    cancel: threading.Event | None = None,
    groups: StepGroups | None = None,
    *,
    before_spawn: Callable[[], None] | None = None,
    while_running: WhileRunning | None = None,
) -> CommandOutcome:
    """Run ``spec.argv`` to completion, timeout or cancel; never raises for the command's sake.

    ``groups`` is told the step's token, process group and end (`StepGroups`).
    ``before_spawn()`` is called before the spawn (it may raise: nothing has started yet);
    ``while_running``: its queue is done once the process is started, while it runs.
    """
    token = step_processes.new_token()
    if before_spawn is not None:
        before_spawn()
    if groups is not None:
        groups.expect(token)
    started = time.monotonic()
    try:
        proc, stdout_read, stderr_read = _spawn(spec, token)
    except OSError as exc:
        if groups is not None:
            groups.not_spawned(token)
        return CommandOutcome(
            None,
            error=f"cannot start {spec.argv[0]!r}: {exc.strerror or exc}",
            duration=time.monotonic() - started,
        )
    if groups is not None:
        groups.add(proc.pid, token)
    outcome = CommandOutcome(None)
    capture = _Capture(spec.secrets)
    stopper = _Stopper(proc.pid, token, spec.grace)
    deadline = None if spec.timeout is None else started + max(spec.timeout, 0.0)
    pipes = {stdout_read: True, stderr_read: False}  # read end -> whether it is stdout
    try:
        if while_running is not None:
            while_running.run()
        _pump(proc, pipes, capture, stopper, deadline, cancel, outcome)
        proc.wait()
        stopper.finish(proc)
    finally:
        for fd in pipes:  # `_pump` never ran (what `while_running` did raised)
            os.close(fd)
        # What escaped the group: re-parented here, or (killed) wherever it went.
        step_processes.ended(proc.pid, token, spec.grace, killed=stopper.kill_at is not None)
    if groups is not None:
        groups.ended(proc.pid)
    outcome.duration = time.monotonic() - started
    outcome.stdout = capture.stdout.decode("utf-8", errors="replace")
    outcome.stderr_tail = capture.stderr[-STDERR_TAIL:].decode("utf-8", errors="replace")
    outcome.stdout_truncated = capture.truncated
    code = proc.returncode
    outcome.exit_code = code if code is not None and code >= 0 else None
    outcome.signal = -code if code is not None and code < 0 else None
    if outcome.timed_out:
        outcome.error = f"timed out after {spec.timeout:g}s; its process group was killed"
    elif outcome.cancelled:
        outcome.error = "cancelled; its process group was killed"
    return outcome


def _pump(
    proc: subprocess.Popen[bytes],
    pipes: dict[int, bool],
    capture: _Capture,
    stopper: _Stopper,
    deadline: float | None,
    cancel: threading.Event | None,
    outcome: CommandOutcome,
) -> None:
    """Read both pipes until they close, watching the deadline and the cancel flag; once the
    step's processes are killed, not longer than the grace for the pipes. ``pipes``: their read
    ends (whether each is stdout), each closed and taken out as it is done with."""
    # select.poll itself: the selectors layer's bookkeeping (keys, maps, register and unregister)
    # cost a step of `true` more than its one poll.
    exited_at: float | None = None
    try:
        poller = select.poll()
        for fd in pipes:
            poller.register(fd, select.POLLIN)
        while pipes:
            closed = False
            for fd, _ in poller.poll(_TICK * 1000):
                data = os.read(fd, 65536)
                if data:
                    capture.add(pipes[fd], data)
                else:
                    capture.end(pipes.pop(fd))
                    poller.unregister(fd)
                    os.close(fd)
                    closed = True
            if not pipes:
                # Both pipes closed: the step is over, whatever the clock or a cancel says now
                # (the usual way out, so none of the checks below on a step's last look).
                break
            if closed:
                # One pipe closed and not the other: at a process's exit the second closes a
                # moment later (half of the steps of `true` look twice), so straight back to
                # `poll` — the checks below come at the next look, `_TICK` at the latest.
                continue
            now = time.monotonic()
            if deadline is not None and now >= deadline and not outcome.cancelled:
                outcome.timed_out = True
                stopper.start()
            if cancel is not None and cancel.is_set() and not outcome.timed_out:
                outcome.cancelled = True
                stopper.start()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            elif exited_at is not None and now - exited_at > 0.2:
                stopper.start()  # the main process is gone; a leftover holds the pipes open
            stopper.tick()
            if stopper.gave_up_on_pipes():
                break
    finally:
        for fd, is_stdout in pipes.items():
            capture.end(is_stdout)
            os.close(fd)
        pipes.clear()
