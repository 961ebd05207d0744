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
import socket
import uuid
from pathlib import Path

__all__ = ["ExecutorLock", "dead_executors", "forget"]


class ExecutorLock:
    def __init__(self, home: Path) -> None:
        self.directory = home / "executors"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.executor_id = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.path = self.directory / f"{self.executor_id}.lock"
        self._fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


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


def forget(home: Path, executor_ids: list[str]) -> None:
    for executor_id in executor_ids:
        (home / "executors" / f"{executor_id}.lock").unlink(missing_ok=True)


