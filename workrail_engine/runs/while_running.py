"""Bookkeeping a run's thread does while its next step's process runs, instead of before.

Between one command step's end and the next step's spawn the run's thread is the whole run: the
child of the next step cannot start until it is done, and a step of ``true`` leaves it
≈ 0.15 ms for everything (the runs' goal, docs/benchmarks.md). Once the next child is spawned,
the thread only waits for it (its exec, its run, its exit: ≈ 0.4 ms of `true`, on the other core
when one is free; with that core busy the child waits for this one, and the work below delays it
as much: docs/benchmarks.md, Runs). So the work that the run's guarantees do not need before the
spawn — the step feed's events, the process-group log's line of the step that ended — is queued
here and done right after the next spawn, in order. (A step's command is made before its spawn:
made ahead here, it cost more than it saved where the child shares this core — docs/runs.md.)

What must stay before the spawn stays there: the step's result durable, the cancel check, the
process-group log's line of the step about to start, and stopping what escaped the step that
ended (a leftover of one step must not meet the next: docs/runs.md). The queue is also done
whenever the run pauses, waits, changes state or stops (`run`), so nothing waits longer than
the run's next step to be done. Work queued from a thread other than the queue's owner (a
parallel member on a pool thread) is done at once: only the run's own thread runs the steps one
after the other.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["WhileRunning"]


class WhileRunning:
    """Work queued by the thread that made this object, done in order by `run`."""

    def __init__(self) -> None:
        self._owner = threading.get_ident()
        # (work, its arguments): a step queues three, a partial each cost its making and a call
        self._work: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._lock = threading.Lock()  # `run` from two threads still does the work in order

    def add(self, work: Callable[..., None], *args: Any) -> None:
        """``work(*args)``, later (or now, from a thread other than the owner's)."""
        if threading.get_ident() != self._owner:
            work(*args)
        else:
            self._work.append((work, args))

    def run(self) -> None:
        """Do what is queued, oldest first (an exception leaves the rest queued)."""
        with self._lock:
            while self._work:
                work, args = self._work.popleft()
                work(*args)
