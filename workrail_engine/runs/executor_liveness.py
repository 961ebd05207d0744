"""Which processes are alive: one lock file per executor under the store's home.

Each process that runs steps is a DBOS executor with its own id and holds an exclusive ``flock``
on ``executors/<id>.lock`` while it lives. A process killed with ``kill -9`` loses its lock with
it, so the next process to start finds the file unlocked and recovers that executor's runs —
this is what keeps several processes on one store (a CLI run next to an MCP server) from
recovering each other's live runs, which DBOS's single-executor default would do.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import threading
import uuid
from pathlib import Path

from ..text.regular_files import UnreadableFile, read_regular_file
from . import step_processes

__all__ = [
    "ExecutorLock",
    "InFlight",
    "dead_executors",
    "executor_locked",
    "forget",
    "stop_orphans",
]


class ExecutorLock:
    def __init__(self, home: Path) -> None:
        self.directory = home / "executors"
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)
        self.executor_id = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.path = self.directory / f"{self.executor_id}.lock"
        self._fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def release(self) -> None:
        """A clean stop: nothing of this executor is left to recover."""
        self.path.with_suffix(".pgids").unlink(missing_ok=True)
        self.path.unlink(missing_ok=True)
        os.close(self._fd)


def dead_executors(home: Path, own: str) -> list[str]:
    """Executors whose process is gone (their lock file is unlocked); their files are removed."""
    dead = []
    for path in sorted((home / "executors").glob("*.lock")):
        executor_id = path.stem
        if executor_id == own:
            continue
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # alive
        finally:
            os.close(fd)
        dead.append(executor_id)
    return dead


def executor_locked(home: Path, executor_id: str) -> bool:
    """Whether the process of ``executor_id`` holds its lock file (a missing file: long gone)."""
    try:
        fd = os.open(home / "executors" / f"{executor_id}.lock", os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def forget(home: Path, executor_ids: list[str]) -> None:
    for executor_id in executor_ids:
        (home / "executors" / f"{executor_id}.lock").unlink(missing_ok=True)


class InFlight:
    """The process groups this executor's steps are running, with the steps' tokens (by which
    the processes that left their group are found: `step_processes`), logged to ``<id>.pgids``.

    An append-only log (``?token`` / ``+pgid token`` / ``-pgid`` lines, no fsync: it only has to
    survive the death of this process, not of the machine), because rewriting a file per step
    costs a millisecond on some filesystems; it is emptied, now and then, when nothing is running.
    A step's token is logged before its spawn (``?``), its group once the spawn has returned
    (``+``): a process killed between the two leaves a step whose processes are still found, by
    the token in their environment.
    """

    def __init__(self, lock: ExecutorLock) -> None:
        self.path = lock.directory / f"{lock.executor_id}.pgids"
        self._fd = os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | os.O_APPEND, 0o600)
        self._groups: dict[int, str] = {}  # pgid → the step's token
        self._expected: set[str] = set()  # tokens of steps being spawned (no group known yet)
        self._written = 0  # lines since the log was last emptied
        self._lock = threading.Lock()

    def close(self) -> None:
        os.close(self._fd)

    def kill_all(self) -> None:
        with self._lock:
            _kill(dict(self._groups), set(self._expected))

    def expect(self, token: str) -> None:
        """A step with this token is about to be spawned (`add` follows once it is)."""
        with self._lock:
            self._expected.add(token)
            os.write(self._fd, f"?{token}\n".encode())

    def add(self, pgid: int, token: str = "") -> None:
        with self._lock:
            self._expected.discard(token)
            self._groups[pgid] = token
            os.write(self._fd, f"+{pgid} {token}\n".encode())

    def forget(self, pgid: int) -> None:
        """The group ended: no longer one to kill (its ``-`` line is `log_end`'s)."""
        with self._lock:
            self._groups.pop(pgid, None)

    def not_spawned(self, token: str) -> None:
        """The spawn of an expected step failed: nothing of it runs (its ``?`` line stays in the
        log; a successor that reads it finds no process with the token)."""
        with self._lock:
            self._expected.discard(token)

    def log_end(self, pgid: int) -> None:
        """The group's ``-`` line: until it is written, a successor that reads the log after this
        process died signals the group, which is empty (its step was waited for) unless its id was
        taken again meanwhile — so it is written right after the step's end or at the latest
        while the next step runs (`while_running`), never later."""
        with self._lock:
            os.write(self._fd, f"-{pgid}\n".encode())
            self._written += 1
            if (
                not self._groups and not self._expected and self._written >= 4096
            ):  # truncating at every step costs more than the step
                os.ftruncate(self._fd, 0)
                self._written = 0


def _kill(groups: dict[int, str], expected: set[str]) -> None:
    """SIGKILL the groups, every process of their steps that left them, and every process of
    the steps whose spawn was under way (``expected`` tokens)."""
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    tokens = [token for token in [*groups.values(), *sorted(expected)] if token]
    if tokens:
        step_processes.signal_all(step_processes.step_processes(tokens, groups), signal.SIGKILL)


def _live_groups(log: str) -> tuple[dict[int, str], set[str]]:
    """The groups a log leaves running (pgid → token), and the tokens of steps logged as about
    to be spawned whose group was never logged."""
    live: dict[int, str] = {}
    expected: set[str] = set()
    for line in log.splitlines():
        kind, rest = line[:1], line[1:]
        if kind == "?":
            expected.add(rest)
            continue
        pgid, _, token = rest.partition(" ")
        try:
            if kind == "+":
                live[int(pgid)] = token
                expected.discard(token)
            elif kind == "-":
                live.pop(int(pgid), None)
        except ValueError:
            continue
    return live, expected


# Three short lines per command step an executor ran: room for about 900,000 steps.
_MAX_JOURNAL_BYTES = 64 * 1024 * 1024


def stop_orphans(home: Path, executor_ids: list[str]) -> None:
    """Kill what a dead executor's steps left running (they were started in own sessions, and
    some may have left those)."""
    for executor_id in executor_ids:
        path = home / "executors" / f"{executor_id}.pgids"
        try:
            # the guarded reader like every other file: a FIFO here must not stall recovery
            journal = read_regular_file(path, _MAX_JOURNAL_BYTES)
        except UnreadableFile:
            continue
        _kill(*_live_groups(journal.decode("utf-8", "replace")))
        path.unlink(missing_ok=True)
