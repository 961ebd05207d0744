"""Work kept off the request path: the cyclic garbage collector's passes and the freeing of the
objects of a document version nobody reads any more, done once the server has been idle for
``IDLE_DELAY``.

Measured on the 1 MB benchmark workflow (``bench/lsp_vs_json_ls.py --trace``): opening it keeps
~130,000 new containers alive (its value, lint findings, positions), and the collector's young
passes, triggered by that count, ran inside the request that allocated them: two passes of the
young generation, sometimes one of the middle one, a third of the open's time. Freeing a closed
or replaced version (its trees, its diagnostics' related locations) cost ~10 % of a close or an
edit. An editor's requests come in bursts (keystrokes, then a pull) with pauses between them;
here both happen in the pauses, and so does building the tolerant tree of a newly opened
document (``server.prime_completion``), which on a fixed timer landed on the first edits.
``YOUNG_GENERATION_THRESHOLD`` (``__main__``) stays the bound during a long burst with no pause.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from typing import Any

from . import tracing

__all__ = ["FULL_COLLECTION_EVERY", "IDLE_DELAY", "MAX_DISCARDED", "IdleWork"]

IDLE_DELAY = 0.5
"""Seconds without a message read or written before the idle work runs: longer than the gap
between the messages of one burst (an edit and its pull, a client's follow-up requests, the
keystrokes of someone typing)."""

FULL_COLLECTION_EVERY = 10
"""One idle collection in this many looks at every generation (CPython's own ratio between the
middle and the oldest generation); the others at the young and middle ones only."""

MAX_DISCARDED = 16
"""Objects kept for the next pause at most: past it, the oldest are freed at once, so that a
burst of edits with no pause does not hold every version of a large document."""

_MIN_YOUNG = 1_000  # fewer new containers than this since the last pass: no pass is worth it


class IdleWork:
    def __init__(self) -> None:
        self._discarded: list[Any] = []
        self._jobs: list[Callable[[], None]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._collections = 0

    def discard(self, *objects: Any) -> None:
        """Keep ``objects`` until the next idle moment, when they are freed."""
        self._discarded.extend(o for o in objects if o is not None)
        if len(self._discarded) > MAX_DISCARDED:
            del self._discarded[:-MAX_DISCARDED]

    def later(self, job: Callable[[], None]) -> None:
        """Run ``job`` at the next idle moment (before the collection)."""
        self._jobs.append(job)

    def activity(self) -> None:
        """A message was read or written: the idle work waits for a pause again."""
        if self._timer is not None:
            self._timer.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test driving the server's objects directly)
            return
        self._timer = loop.call_later(IDLE_DELAY, self.run)

    def run(self) -> None:
        self._timer = None
        jobs, self._jobs = self._jobs, []
        for job in jobs:
            job()
        with tracing.span("idle", discarded=len(self._discarded)):
            # Counted before the freeing, which lowers the count (it is net of what is freed)
            # while what was allocated since the last pass is still in the young generation.
            young = gc.get_count()[0]
            self._discarded.clear()
            if young < _MIN_YOUNG:
                return
            self._collections += 1
            gc.collect(2 if self._collections % FULL_COLLECTION_EVERY == 0 else 1)
