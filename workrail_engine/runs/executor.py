"""Running one command: argv only, its own session, killed as a group, output captured with caps.

Why not ``subprocess.run(timeout=)``: it kills only the direct child, and a grandchild that keeps
the pipe open makes it hang. Each command here starts in a new session (``start_new_session`` —
not ``preexec_fn``, which can deadlock in a threaded server), so the whole tree shares one process
group; on timeout or cancel the group gets SIGTERM, a grace period, then SIGKILL. When the main
process exits, anything it left behind in its group is stopped the same way, so a step's
background processes never outlive it and never hold its pipes.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["STDERR_TAIL", "STDOUT_CAP", "CommandOutcome", "CommandSpec", "run_command"]

STDOUT_CAP = 1 << 20  # bytes of stdout kept (the head)
STDERR_TAIL = 8 << 10  # bytes of stderr kept (the tail, where errors are)
_TICK = 0.05  # how often a waiting loop looks at the clock and the cancel flag


@dataclass(frozen=True)
class CommandSpec:
    argv: list[str]
    cwd: Path
    env: Mapping[str, str]
    timeout: float | None = None  # seconds; None: no limit
    grace: float = 2.0  # seconds between SIGTERM and SIGKILL


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
    text = stdout.strip()
    if text and not truncated:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return stdout


@dataclass
class _Capture:
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    truncated: bool = False

    def add(self, is_stdout: bool, data: bytes) -> None:
        if is_stdout:
            room = STDOUT_CAP - len(self.stdout)
            if len(data) > room:
                self.truncated = True
            self.stdout += data[: max(room, 0)]
        else:
            self.stderr += data
            if len(self.stderr) > 2 * STDERR_TAIL:
                del self.stderr[: len(self.stderr) - STDERR_TAIL]


def _group_alive(pgid: int) -> bool:
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
    """SIGTERM to the group now, SIGKILL once the grace period is over."""

    def __init__(self, pgid: int, grace: float) -> None:
        self.pgid, self.grace = pgid, grace
        self.kill_at: float | None = None

    def start(self) -> None:
        if self.kill_at is None:
            _signal_group(self.pgid, signal.SIGTERM)
            self.kill_at = time.monotonic() + self.grace

    def tick(self) -> None:
        if self.kill_at is not None and time.monotonic() >= self.kill_at:
            _signal_group(self.pgid, signal.SIGKILL)

    def finish(self, proc: subprocess.Popen) -> None:
        """After the main process is gone: stop what is left of its group, within the grace."""
        if not _group_alive(self.pgid):
            return
        self.start()
        while _group_alive(self.pgid) and time.monotonic() < (self.kill_at or 0):
            time.sleep(_TICK / 5)
        _signal_group(self.pgid, signal.SIGKILL)
        proc.poll()


def _spawn(spec: CommandSpec) -> subprocess.Popen:
    return subprocess.Popen(
        spec.argv,
        cwd=spec.cwd,
        env=dict(spec.env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )


def run_command(
    spec: CommandSpec,
    cancel: threading.Event | None = None,
    on_start: Callable[[int], None] | None = None,
    on_end: Callable[[int], None] | None = None,
) -> CommandOutcome:
    """Run ``spec.argv`` to completion, timeout or cancel; never raises for the command's sake.

    ``on_start(pgid)`` / ``on_end(pgid)`` let the caller keep a list of live process groups (so
    that a successor can stop them if this process dies).
    """
    started = time.monotonic()
    try:
        proc = _spawn(spec)
    except OSError as exc:
        return CommandOutcome(
            None,
            error=f"cannot start {spec.argv[0]!r}: {exc.strerror or exc}",
            duration=time.monotonic() - started,
        )
    if on_start is not None:
        on_start(proc.pid)
    outcome = CommandOutcome(None)
    capture = _Capture()
    stopper = _Stopper(proc.pid, spec.grace)
    deadline = None if spec.timeout is None else started + max(spec.timeout, 0.0)
    _pump(proc, capture, stopper, deadline, cancel, outcome)
    proc.wait()
    stopper.finish(proc)
    if on_end is not None:
        on_end(proc.pid)
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
    proc: subprocess.Popen,
    capture: _Capture,
    stopper: _Stopper,
    deadline: float | None,
    cancel: threading.Event | None,
    outcome: CommandOutcome,
) -> None:
    """Read both pipes until they close, watching the deadline and the cancel flag."""
    selector = selectors.PollSelector()  # no epoll descriptor to create and close per command
    assert proc.stdout is not None and proc.stderr is not None
    selector.register(proc.stdout, selectors.EVENT_READ, True)
    selector.register(proc.stderr, selectors.EVENT_READ, False)
    exited_at: float | None = None
    try:
        while selector.get_map():
            for key, _ in selector.select(_TICK):
                data = os.read(key.fd, 65536)
                if data:
                    capture.add(key.data, data)
                else:
                    selector.unregister(key.fileobj)
                    key.fileobj.close()  # type: ignore[union-attr]
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
    finally:
        for key in list(selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        selector.close()
