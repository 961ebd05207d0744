"""The runs executing in this process, as a waiter here watches them: what `RunService.wait` and
`continue` block on instead of reading the run from the database again and again."""

from __future__ import annotations

import threading
import time

__all__ = ["RunProgress"]


class RunProgress:
    """Per run executing here, two counts — state changes and step results recorded — and which
    of them wait for the agent; a condition notified when a run changes state."""

    def __init__(self) -> None:
        self.live: dict[str, list[int]] = {}  # run id → [state changes, step results recorded]
        self.waiting: set[str] = set()  # runs of this process waiting for the agent
        self._changed = threading.Condition()

    def started(self, run_id: str) -> None:
        self.live[run_id] = [0, 0]

    def ended(self, run_id: str) -> None:
        self.live.pop(run_id, None)
        self.waiting.discard(run_id)
        self.notify()

    def working(self) -> bool:
        """Whether a run here is in the middle of its steps (not just waiting for the agent)."""
        return any(run_id not in self.waiting for run_id in list(self.live))

    def notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def count(self, run_id: str, which: int) -> None:
        progress = self.live.get(run_id)  # a member run by another process than its run's
        if progress is not None:
            progress[which] += 1

    def change_mark(self, run_id: str) -> list[int]:
        """The counts ``wait_for_change`` compares against: take it *before* reading the run, so
        a change between that read and the wait is not missed (a run not yet executing here
        counts from zero: one that starts in between has changed)."""
        progress = self.live.get(run_id)
        return list(progress) if progress is not None else [0, 0]

    def running_mark(self, run_id: str) -> list[int] | None:
        """The `change_mark` of a run executing here and not waiting for the agent; None for
        any other. Such a run has nothing new to read before it changes: a waiter for its end
        waits first (`wait_for_change` with ``here``), then reads it."""
        progress = self.live.get(run_id)
        return None if progress is None or run_id in self.waiting else list(progress)

    def wait_for_change(
        self,
        run_id: str,
        seconds: float,
        *,
        steps: bool,
        stop: threading.Event | None = None,
        poll: float = 0.1,
        remote: float = 0.25,
        since: list[int] | None = None,
        here: bool = False,
    ) -> None:
        """Return when a run of this process changes state (or, with ``steps``, has recorded a
        step since the call, looked at every ``poll`` s), when ``seconds`` are up or ``stop`` is
        set. A run executing elsewhere can only be read again: this sleeps ``remote`` s.
        ``since``: a ``change_mark`` taken before the caller read the run; ``here``: taken while
        the run executed here, so that a run gone from this process since has ended."""
        progress = self.live.get(run_id)
        if progress is None:
            if not here:
                time.sleep(max(min(seconds, remote), 0.0))
            return
        seen = since if since is not None else list(progress)
        end = time.monotonic() + seconds
        with self._changed:
            while True:
                now = self.live.get(run_id)
                if now is None or now[0] != seen[0] or (steps and now[1] != seen[1]):
                    return
                left = end - time.monotonic()
                if left <= 0 or (stop is not None and stop.is_set()):
                    return
                self._changed.wait(min(left, poll))
