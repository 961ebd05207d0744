"""The steps of the runs executing in this process, as they start and end, in order.

A front end that shows a run's progress step by step (an MCP task's status notifications) reads
this feed instead of reading the whole run again and again: a step shorter than the interval
between two reads would go unnamed. Each run executing here has one feed, opened before its
first step and closed when the run stops executing here (it ended, or waits for the agent and
this process stops); every event has a position, so a reader that keeps its cursor misses none.

The feed is memory of this process only. A run executing in another process (a worker, another
machine on Postgres) has none here; `RunService.step_events` then reads the steps' ends from the
journal, which holds them in order too (their starts are not recorded there). Likewise the
members of a parallel group that another process takes from the shared queue (Postgres) are not
in this process's feed of their run.

A sequential run adds a step's end and the next step's start right after that next step's process
is spawned (`while_running`: off the path between the two steps), in order; before any pause, wait
or end of the run, what is queued is added first.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_EVENTS_PER_RUN",
    "MAX_CLOSED_FEEDS",
    "StepEvents",
    "StepFeedRead",
    "ended_event",
    "started_event",
]

# A feed keeps its last events only: a reader further behind than this is told how many it missed
# (a loop of thousands of iterations must not grow the server's memory without bound).
MAX_EVENTS_PER_RUN = 2_000
# Closed feeds kept for readers that come late (a task that follows a run which just ended).
MAX_CLOSED_FEEDS = 32


def started_event(step: str, title: str | None) -> dict[str, Any]:
    """A step's ``started`` event, made when it begins (`StepEvents.append` adds it later)."""
    return {"event": "started", "step": step, "at": time.time(), "title": title}


def ended_event(step: str, status: str) -> dict[str, Any]:
    """A step's ``ended`` event, made when its result is recorded."""
    return {"event": "ended", "step": step, "at": time.time(), "status": status}


@dataclass
class StepFeedRead:
    """What a reader gets: the events after its cursor, its next cursor, how many events it
    missed (fell out of the bounded feed), and whether the run stopped executing here."""

    events: list[dict[str, Any]]
    cursor: int
    missed: int = 0
    closed: bool = False


@dataclass
class _Feed:
    events: list[dict[str, Any]] = field(default_factory=list)
    first: int = 0  # position of events[0]
    closed: bool = False


class StepEvents:
    """Per-run feeds of step events: ``started`` (a step begins: its first attempt, or the agent
    is asked), ``ended`` (its result is recorded), ``waiting`` (the run waits for the agent)."""

    def __init__(self) -> None:
        self._feeds: OrderedDict[str, _Feed] = OrderedDict()
        # The condition's own lock, taken directly where a run's thread adds its events (two a
        # step): ``with`` on the condition is two Python calls more each time.
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._readers = 0  # waiting in `read`: an event with none waiting wakes nobody

    def open(self, run_id: str) -> None:
        """A feed for ``run_id`` (kept if there is one: a run resumed here continues its feed)."""
        with self._changed:
            feed = self._feeds.get(run_id)
            if feed is None:
                self._feeds[run_id] = _Feed()
            else:
                feed.closed = False

    def has(self, run_id: str) -> bool:
        with self._changed:
            return run_id in self._feeds

    def add(self, run_id: str, event: str, step: str, **details: Any) -> None:
        self.append(run_id, {"event": event, "step": step, "at": time.time(), **details})

    def append(self, run_id: str, event: dict[str, Any]) -> None:
        """``event`` as `add`, `started_event` or `ended_event` makes it (what a run's thread
        queues at every step: no keyword arguments to carry through the queue and back)."""
        with self._lock:
            feed = self._feeds.get(run_id)
            if feed is None:
                return
            feed.events.append(event)
            if len(feed.events) > MAX_EVENTS_PER_RUN:
                del feed.events[0]
                feed.first += 1
            if self._readers:  # two events a step: the notification's own work, spared
                self._changed.notify_all()

    def close(self, run_id: str) -> None:
        with self._changed:
            feed = self._feeds.get(run_id)
            if feed is None:
                return
            feed.closed = True
            self._feeds.move_to_end(run_id)
            closed = [k for k, f in self._feeds.items() if f.closed]
            for old in closed[: max(len(closed) - MAX_CLOSED_FEEDS, 0)]:
                del self._feeds[old]
            self._changed.notify_all()

    def end(self, run_id: str) -> int:
        """The cursor after the last event so far (a reader starting now sees only what follows)."""
        with self._changed:
            feed = self._feeds.get(run_id)
            return feed.first + len(feed.events) if feed is not None else 0

    def read(
        self, run_id: str, cursor: int, seconds: float, stop: threading.Event | None = None
    ) -> StepFeedRead | None:
        """The events after ``cursor``, waiting up to ``seconds`` for one (or for the run to stop
        executing here, or ``stop``); None when this process has no feed of the run."""
        end = time.monotonic() + max(seconds, 0.0)
        with self._changed:
            while True:
                feed = self._feeds.get(run_id)
                if feed is None:
                    return None
                last = feed.first + len(feed.events)
                left = end - time.monotonic()
                if (
                    cursor < last
                    or feed.closed
                    or left <= 0
                    or (stop is not None and stop.is_set())
                ):
                    start = max(cursor, feed.first)
                    return StepFeedRead(
                        events=[dict(e) for e in feed.events[start - feed.first :]],
                        cursor=last,
                        missed=start - cursor,
                        closed=feed.closed,
                    )
                self._readers += 1
                try:
                    self._changed.wait(min(left, 0.5))
                finally:
                    self._readers -= 1
