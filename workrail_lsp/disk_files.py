"""Files the client has not opened, read from disk without ever blocking the server.

The engine's reader (`workrail_engine.text.regular_files`) reads only regular files, never past
`MAX_DOCUMENT_BYTES`, and opens without blocking on a FIFO. What it cannot bound is a regular
file whose open or read itself stalls (a hung network or FUSE mount): every disk read of the
server therefore runs on a read thread and is waited for at most `READ_TIMEOUT_SECONDS`. A read
that never returns strands its thread, not the server's loop; the threads are daemons, so a
stranded one does not hold up the server's exit either.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
from collections.abc import Callable
from typing import TypeVar

from workrail_engine.text.regular_files import UnreadableFile, read_regular_file

__all__ = ["READ_TIMEOUT_SECONDS", "ReadTimedOut", "bounded_read", "read_unopened"]

log = logging.getLogger(__name__)
T = TypeVar("T")

READ_TIMEOUT_SECONDS = 5.0
_MAX_READ_THREADS = 8  # how many stalled reads are tolerated before reads are refused outright


class ReadTimedOut(Exception):
    """A disk read took longer than `READ_TIMEOUT_SECONDS` (it goes on, unwaited for)."""


class _ReadThreads:
    """Daemon threads that run reads handed to them; one more is started when none is free."""

    def __init__(self, limit: int) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._limit = limit

    def _work(self) -> None:
        while True:
            self._jobs.get()()
            with self._lock:
                self._idle += 1

    def run(self, read: Callable[[], T], timeout: float) -> T:
        outcome: list[tuple[bool, object]] = []
        done = threading.Event()

        def job() -> None:
            try:
                outcome.append((True, read()))
            except BaseException as error:  # handed to the waiting caller
                outcome.append((False, error))
            finally:
                done.set()

        with self._lock:
            if self._idle:
                self._idle -= 1
            elif self._threads < self._limit:
                self._threads += 1
                threading.Thread(target=self._work, name="workrail-disk-read", daemon=True).start()
            else:
                raise ReadTimedOut(f"{self._limit} earlier reads are still stalled")
        self._jobs.put(job)
        if not done.wait(timeout):
            raise ReadTimedOut(f"no answer from the disk within {timeout:g} s")
        ok, value = outcome[0]
        if not ok:
            raise value  # type: ignore[misc]
        return value  # type: ignore[return-value]


_threads = _ReadThreads(_MAX_READ_THREADS)


def bounded_read(read: Callable[[], T], timeout: float = READ_TIMEOUT_SECONDS) -> T:
    """``read()`` run on a read thread; raises `ReadTimedOut` if it takes longer than ``timeout``."""
    return _threads.run(read, timeout)


def read_unopened(path: str | None) -> str:
    """The text of a file the client has not opened; "" for anything that is not a readable
    regular file within the size limit, or that does not answer in time (logged)."""
    if path is None:
        return ""
    try:
        data = bounded_read(functools.partial(read_regular_file, path))
    except (UnreadableFile, ReadTimedOut) as error:
        log.warning("not reading %s: %s", path, error)
        return ""
    return data.decode("utf-8", errors="replace")
