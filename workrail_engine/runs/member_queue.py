"""The queue of parallel-group members on a Postgres run store: a table of ours, woken by NOTIFY.

Why not DBOS's queue: there each member costs the run an enqueue (a checkpointed DBOS call,
15–20 ms on a loaded machine), then waits for the queue's next poll (every 50 ms) and DBOS's
claim and start (≈ 3.6 transactions), 75–90 ms from enqueue to start; a group of 0.2 s steps
took 1.6–1.8× its ideal time. Here (docs/benchmarks.md, Runs):

* the run queues its members in ``workrail.members`` and notifies ``workrail_members`` in the
  same statement (`Journal.enqueue_members`);
* every process allowed to run commands listens on that channel from a connection of its own;
  woken, it claims the oldest queued member on that connection with ``FOR UPDATE SKIP LOCKED``
  (one statement; two processes woken together never claim the same member) and runs it in a
  thread;
* the member records its result in the journal as any step does, then marks its row ended and
  notifies ``workrail_member_ends`` (the run waiting for it, in whichever process, wakes at once).

What DBOS did for members, and where it is now: the run's ``parallel_limit`` across processes is
the run's sliding window (at most that many of its members queued or running); recovery: a
member claimed by an executor that died is queued again when the liveness watch finds it dead
(`durable.recovery.recover`), and its journal rows make the new execution a replay; cancellation:
a member reads the run's status before each step (none starts after a cancel, queued or not) and
the cancel watch kills the steps running; replay: a member whose result is in the journal
returns it without running, and queueing a member again is a no-op.

A notification can be missed (the listening connection was lost and made again): the listener
also looks for queued members once a second, and after each reconnect.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from .journal import CLAIM_MEMBER, MEMBER_ENDED, MEMBERS_QUEUED, RELEASE_CLAIMS, Recorded
from .pg_liveness import connection_parameters

__all__ = ["MemberQueue"]

log = logging.getLogger(__name__)

LOOK_EVERY = 1.0  # seconds: the listener looks for queued members without a notification


class MemberQueue:
    """This process's listener: claims queued members and runs each with ``execute(run_id,
    step_key, member)`` in a thread of its own; ``ended()`` is called when any member ends
    (in any process)."""

    def __init__(
        self,
        url: str,
        executor_id: str,
        execute: Callable[[str, str, dict[str, Any], Recorded | None], None],
        ended: Callable[[], None],
    ) -> None:
        self._params = connection_parameters(url, "workrail-members")
        self._executor_id = executor_id
        self._execute = execute
        self._ended = ended
        self._stop = threading.Event()
        self._conn: psycopg.Connection | None = None
        self._running: set[tuple[str, str]] = set()  # (run id, step key) of the members run here
        self._guard = threading.Lock()
        self._thread = threading.Thread(target=self._listen, name="workrail-members", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Claim nothing more. The thread ends within `LOOK_EVERY` (not waited for: it holds
        nothing but its listening connection, which it closes; members it started go on)."""
        self._stop.set()

    # --- the listener thread ---------------------------------------------------------------

    def _listen(self) -> None:
        pause = 0.2
        while not self._stop.is_set():
            try:
                self._connect()
                pause = 0.2
                self._claim_all()
                self._wait_and_claim()
            except psycopg.Error as error:
                if self._stop.is_set():
                    break
                log.warning("the member queue's connection was lost (%s); connecting again", error)
                self._stop.wait(pause)
                pause = min(pause * 2, 5.0)
            finally:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

    def _connect(self) -> None:
        conn = psycopg.connect(**self._params, autocommit=True)
        conn.execute(f"LISTEN {MEMBERS_QUEUED}")
        conn.execute(f"LISTEN {MEMBER_ENDED}")
        # A claim whose answer a lost connection took with it is held by this (living) executor
        # and run by nobody: queue such claims again.
        with self._guard:
            here = [f"{run_id} {key}" for run_id, key in self._running]
        conn.execute(RELEASE_CLAIMS, (self._executor_id, here))
        self._conn = conn

    def _wait_and_claim(self) -> None:
        conn = self._conn
        assert conn is not None
        looked = time.monotonic()
        while not self._stop.is_set():
            queued = False
            for note in conn.notifies(timeout=LOOK_EVERY, stop_after=1):
                if note.channel == MEMBER_ENDED:
                    self._ended()
                else:
                    queued = True
            if self._stop.is_set():
                return
            # Woken by a queued member, or a second went by without one: look (members whose
            # notification was missed are found within the second).
            if queued or time.monotonic() - looked >= LOOK_EVERY:
                self._claim_all()
                looked = time.monotonic()

    def _claim_all(self) -> None:
        """Claim on the listening connection (the journal's is shared by the steps of every run
        of this process, under a lock: claims queued behind their writes)."""
        conn = self._conn
        assert conn is not None
        while not self._stop.is_set():
            claimed = conn.execute(CLAIM_MEMBER, (self._executor_id,)).fetchone()
            if claimed is None:
                return
            run_id, key, member, status, replayed = claimed
            with self._guard:
                self._running.add((run_id, key))
            # nothing recorded yet: what the member would read back is known
            recorded = None if replayed else Recorded({}, set(), status)
            threading.Thread(
                target=self._run,
                args=(run_id, key, json.loads(member), recorded),
                name=f"workrail-member-{key}",
                daemon=True,
            ).start()

    def _run(
        self, run_id: str, key: str, member: dict[str, Any], recorded: Recorded | None
    ) -> None:
        try:
            self._execute(run_id, key, member, recorded)
        finally:
            with self._guard:
                self._running.discard((run_id, key))
