"""Cancellation that reaches processes: a watcher that turns a cancelled run into killed groups.

A run may be cancelled from any process sharing the store (the CLI, another server); the process
running its steps learns it by polling the run statuses of the steps it is running, a few times a
second, and sets the steps' cancel flags — the executor then kills their process groups.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable

__all__ = ["CancelWatch"]

log = logging.getLogger(__name__)


class CancelWatch:
    def __init__(
        self, cancelled: Callable[[list[str]], Iterable[str]], interval: float = 0.25
    ) -> None:
        self._cancelled = cancelled  # run ids → those of them that are cancelled
        self._interval = interval
        self._flags: dict[str, list[threading.Event]] = defaultdict(list)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, run_id: str, flag: threading.Event | None = None) -> threading.Event:
        """A flag set when ``run_id`` is cancelled, until `release`; ``flag``: one to reuse (a
        run's attempts share one: once set, every later attempt of the run is cancelled too)."""
        flag = threading.Event() if flag is None else flag
        with self._lock:
            self._flags[run_id].append(flag)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="workrail-cancel-watch", daemon=True
                )
                self._thread.start()
        return flag

    def release(self, run_id: str, flag: threading.Event) -> None:
        with self._lock:
            flags = self._flags.get(run_id, [])
            if flag in flags:
                flags.remove(flag)
            if not flags:
                self._flags.pop(run_id, None)

    def cancel_local(self, run_id: str) -> None:
        """Set the flags at once for a run cancelled in this process (no need to wait for a poll)."""
        with self._lock:
            for flag in self._flags.get(run_id, []):
                flag.set()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            with self._lock:
                ids = list(self._flags)
            if not ids:
                continue
            try:
                for run_id in self._cancelled(ids):
                    self.cancel_local(run_id)
            except Exception:  # the store may be briefly unavailable; try again next tick
                log.warning("cannot read run statuses for cancellation", exc_info=True)
