"""Which executors sharing a Postgres run store are alive, from session-level advisory locks.

Each process registers a row in ``workrail.executors`` and holds ``pg_advisory_lock(lock_key)`` on
its own connection for as long as it lives. The server releases a session's locks when the session
ends, so a lock anyone can take again belongs to a process whose connection is gone:

* ``kill -9`` (or a crash) on a live machine: the kernel closes the socket, the server sees it at
  once and the lock is free within milliseconds;
* a machine that vanishes (power, network): the server's TCP keepalives set below end the
  session about ``KEEPALIVE_IDLE + KEEPALIVE_COUNT * KEEPALIVE_INTERVAL`` = 11 s after its last
  packet (measured over a veth pair whose far end went down: 10.2 s after the link went down).

A free lock is only a *suspect* at first: it is claimed when it is still free ``grace`` seconds
later. A server restart or failover ends every session at once, and a living process needs up to
one watch tick to reconnect and take its lock again; without the grace the first process back
would declare all the others dead and recover their runs while they still execute them. A process
that exits on purpose leaving runs to others (`workrail run` ending on a step that waits for the
agent, a server stopped mid-step) says so in its row first (`leaving`): its lock, once free,
cannot come back, so it is claimed at the first check instead of two checks later.

Only psycopg and the standard library: this module works alone; the run store
(durable/runtime.py) wires it to DBOS's recovery.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import psycopg
from psycopg.conninfo import conninfo_to_dict

__all__ = ["PostgresLiveness", "connection_parameters", "lock_key"]

log = logging.getLogger(__name__)

KEEPALIVE_IDLE = 5  # seconds of silence before the first probe
KEEPALIVE_INTERVAL = 2  # seconds between probes
KEEPALIVE_COUNT = 3  # unanswered probes before the peer counts as gone
# Unacknowledged data fails a connection after this; it also overrides the probe count above
# (tcp(7)), so it is set to the same 11 s rather than longer.
USER_TIMEOUT_MS = (KEEPALIVE_IDLE + KEEPALIVE_COUNT * KEEPALIVE_INTERVAL) * 1000

# Client side (libpq): this process notices a vanished server instead of hanging on a query, so
# it connects again (the watch thread here, the step journal at its next statement). A URL's own
# settings win over these defaults.
CLIENT_DEFAULTS = {
    "keepalives": "1",
    "keepalives_idle": str(KEEPALIVE_IDLE),
    "keepalives_interval": str(KEEPALIVE_INTERVAL),
    "keepalives_count": str(KEEPALIVE_COUNT),
    "tcp_user_timeout": str(USER_TIMEOUT_MS),
    "connect_timeout": "10",
}

# The schema is created under a transaction-level advisory lock: two sessions running
# CREATE ... IF NOT EXISTS at the same moment can still collide on the catalog's unique indexes.
SCHEMA_LOCK = "workrail.executors:schema"
CREATE_SCHEMA = "CREATE SCHEMA IF NOT EXISTS workrail"
CREATE_TABLE = """CREATE TABLE IF NOT EXISTS workrail.executors(
    executor_id text PRIMARY KEY, lock_key bigint NOT NULL, host text, pid int, started_at double precision,
    left_at double precision)"""
# Stores made before `left_at` existed get it added; looked up first, since the ALTER takes the
# table's exclusive lock even when the column is there.
HAS_LEFT_AT = (
    "SELECT 1 FROM information_schema.columns WHERE table_schema = 'workrail'"
    " AND table_name = 'executors' AND column_name = 'left_at'"
)
ADD_LEFT_AT = "ALTER TABLE workrail.executors ADD COLUMN IF NOT EXISTS left_at double precision"


def lock_key(name: str) -> int:
    """A signed 64-bit advisory-lock key for ``name`` (the leading 8 bytes of its SHA-256).

    Derived, not random: anyone can compute an executor's key from its id (when reading
    ``pg_locks``, say), and a reconnect takes the same key without reading it back. The prefix
    keeps our keys apart from those other users of the database derive from their own names
    (DBOS hashes its own); a collision among 64-bit keys is out of reach for any number of
    executors a store will see.
    """
    digest = hashlib.sha256(f"workrail.executor:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _first_value(cursor: Any) -> Any:
    """The first column of the one row a query like ``SELECT pg_try_advisory_lock(…)`` returns."""
    row = cursor.fetchone()
    if row is None:
        raise RuntimeError("the query returned no row")
    return row[0]


def connection_parameters(url: str, application_name: str) -> dict[str, Any]:
    """libpq parameters from a URL, SQLAlchemy's ``postgresql+psycopg://`` form accepted too."""
    plain = re.sub(r"^postgres(?:ql)?\+\w+://", "postgresql://", url)
    return {
        **CLIENT_DEFAULTS,
        "application_name": application_name,
        **{k: str(v) for k, v in conninfo_to_dict(plain).items()},
    }


class _Failing(NamedTuple):
    """Checks failing: since when (monotonic), the last error, when a failure was last logged."""

    since: float
    error: psycopg.Error
    logged_at: float


class PostgresLiveness:
    """Which executors sharing a Postgres run store are alive: each holds a session-level advisory lock."""

    def __init__(
        self, url: str, executor_id: str, *, interval: float = 5.0, grace: float | None = None
    ) -> None:
        self.executor_id = executor_id
        self.interval = interval
        # Two ticks: every living process retries its connection once a tick.
        self.grace = 2 * interval if grace is None else grace
        self._params = connection_parameters(url, "workrail-liveness")
        self._key = lock_key(executor_id)
        self._guard = (
            threading.Lock()
        )  # one psycopg connection, used by callers and the watch thread
        self._conn: psycopg.Connection | None = None
        self._suspects: dict[str, float] = {}  # executor id -> when its lock was first found free
        self._claimed: dict[str, int] = {}  # executor id -> lock key, held until forget()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started_at = time.time()
        self._started = False
        # While checks fail (one object, replaced whole: the worker's thread reads it).
        self._failing: _Failing | None = None

    def start(self) -> None:
        with self._guard:
            self._connect(first=True)
            self._started = True

    def claim_dead(self) -> list[str]:
        """The registered executors other than this one that are dead, their locks now held here."""
        with self._guard:
            conn = self._connection()
            rows = conn.execute(
                "SELECT executor_id, lock_key, left_at FROM workrail.executors"
                " WHERE executor_id <> %s ORDER BY executor_id",
                (self.executor_id,),
            ).fetchall()
            now, free, claimed = time.monotonic(), set(), []
            for executor_id, key, left_at in rows:
                # Session locks are re-entrant: one claimed already would be "taken" again here.
                if executor_id in self._claimed or not self._try_lock(conn, executor_id, key):
                    continue
                free.add(executor_id)
                suspected = self._suspects.setdefault(executor_id, now)
                if left_at is not None or now - suspected >= self.grace:
                    self._claimed[executor_id] = key
                    claimed.append(executor_id)
                else:
                    _unlock(conn, key)  # only a suspect: its owner may be reconnecting
            # A lock found held since is no suspect any more: the grace starts again.
            self._suspects = {
                i: t for i, t in self._suspects.items() if i in free and i not in claimed
            }
            return claimed

    def forget(self, executor_ids: list[str]) -> None:
        """Delete their rows, then release their locks (after the caller recovered their runs).

        In this order: a claimer that read the rows before the delete and takes a lock after the
        release finds the row gone (``_try_lock`` looks again) and leaves it alone."""
        with self._guard:
            conn = self._connection()
            conn.execute(
                "DELETE FROM workrail.executors WHERE executor_id = ANY(%s)", (executor_ids,)
            )
            self._release(conn, executor_ids)

    def leaving(self) -> None:
        """This process is about to exit and leaves runs pending for others: marked in its row,
        it is claimed at the first check after its lock is free (its session ended with the
        process) rather than after the grace. Call only on the way out: a process that lived on
        and lost its session to a server restart would be claimed before it could reconnect."""
        self._stop.set()  # no reconnect (and re-registration) from here on
        with self._guard:
            if self._conn is None or self._conn.closed or self._conn.broken:
                return  # lock already gone: the others claim it after the grace, as for a crash
            try:
                self._conn.execute(
                    "UPDATE workrail.executors SET left_at = %s WHERE executor_id = %s",
                    (time.time(), self.executor_id),
                )
            except psycopg.Error as exc:  # its runs are claimed after the grace, as for a crash
                log.debug("could not mark executor %s as leaving: %s", self.executor_id, exc)

    def watch(self, recover: Callable[[list[str]], None]) -> None:
        """Every ``interval`` s in a daemon thread: `check`."""
        if self._thread is not None:
            raise RuntimeError("already watching")
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._watch, args=(recover,), name="workrail-pg-liveness", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """A clean stop: nothing of this executor is left to recover, and its lock goes with the session."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()  # a recovery in progress finishes first
            self._thread = None
        with self._guard:
            self._started = False
            if self._conn is None:
                return
            try:
                self._conn.execute(
                    "DELETE FROM workrail.executors WHERE executor_id = %s", (self.executor_id,)
                )
            except (
                psycopg.Error
            ) as exc:  # the row stays: someone will "recover" this executor, finding nothing
                log.warning("could not unregister executor %s: %s", self.executor_id, exc)
            finally:
                self._conn.close()
                self._conn = None

    # -- the watch thread

    def _watch(self, recover: Callable[[list[str]], None]) -> None:
        while not self._stop.wait(self.interval):
            self.check(recover)

    def check(self, recover: Callable[[list[str]], None]) -> None:
        """Claim the dead executors (`claim_dead`), recover their runs, then forget them; on a
        failure, leave them for the next check. Besides the watch's ticks, a worker checks at
        every turn of its loop, so the runs of a process that left are its at once."""
        try:
            claimed = self.claim_dead()
        except psycopg.Error as exc:  # the database briefly unavailable: the next tick reconnects
            self._failed(exc)
            return
        self._failing = None
        if not claimed:
            return
        try:
            recover(claimed)
        except Exception:
            # The rows stay and the locks go: the next tick, here or elsewhere, tries again.
            log.exception(
                "recovering the runs of dead executors %s failed; left for a retry", claimed
            )
            self._give_back(claimed)
            return
        try:
            self.forget(claimed)
        except psycopg.Error as exc:
            log.warning("could not forget the recovered executors %s: %s", claimed, exc)

    def _failed(self, exc: psycopg.Error) -> None:
        """A failed check: logged once a watch interval at most (a worker checks four times a
        second), kept for `raise_if_unreachable`."""
        now = time.monotonic()
        failing = self._failing
        since = now if failing is None else failing.since
        logged_at = failing.logged_at if failing is not None else None
        if logged_at is None or now - logged_at >= self.interval:
            log.warning(
                "executor liveness check failed, retrying in %.1f s: %s", self.interval, exc
            )
            logged_at = now
        self._failing = _Failing(since, exc, logged_at)

    def raise_if_unreachable(self, longer_than: float) -> None:
        """Raise the last check's error when every check has failed for ``longer_than`` seconds:
        the store is gone for longer than its connections wait for it (`sql_store.RECONNECT_FOR`)."""
        failing = self._failing
        if failing is not None and time.monotonic() - failing.since > longer_than:
            raise failing.error

    def _give_back(self, executor_ids: list[str]) -> None:
        try:
            with self._guard:
                self._release(self._connection(), executor_ids)
        except psycopg.Error as exc:  # a lost session has released them anyway
            log.warning("could not release the locks of %s: %s", executor_ids, exc)

    # -- the connection

    def _connection(self) -> psycopg.Connection:
        """The session, reconnected (and re-registered) if it was lost; call with the guard held."""
        if not self._started:
            raise RuntimeError("PostgresLiveness is not started (or closed)")
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._connect(first=False)
        assert self._conn is not None
        return self._conn

    def _connect(self, *, first: bool) -> None:
        if self._conn is not None:
            self._conn.close()
        # Locks and suspicions of a lost session are void: the server released those locks.
        self._conn, self._claimed, self._suspects = None, {}, {}
        conn = psycopg.connect(**self._params, autocommit=True)
        try:
            self._prepare(conn)
            self._register(conn, first)
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    @staticmethod
    def _prepare(conn: psycopg.Connection) -> None:
        # Server side: a vanished client machine ends this session (and frees its lock) in about
        # 11 s instead of the kernel's default of two hours. Ignored on a Unix socket.
        conn.execute(f"SET tcp_keepalives_idle = {KEEPALIVE_IDLE}")
        conn.execute(f"SET tcp_keepalives_interval = {KEEPALIVE_INTERVAL}")
        conn.execute(f"SET tcp_keepalives_count = {KEEPALIVE_COUNT}")
        conn.execute(f"SET tcp_user_timeout = {USER_TIMEOUT_MS}")
        if conn.info.server_version >= 140000:
            conn.execute("SET idle_session_timeout = 0")  # this session is idle by design
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(SCHEMA_LOCK),))
            conn.execute(CREATE_SCHEMA)
            conn.execute(CREATE_TABLE)
            if conn.execute(HAS_LEFT_AT).fetchone() is None:
                conn.execute(ADD_LEFT_AT)

    def _register(self, conn: psycopg.Connection, first: bool) -> None:
        # The lock before the row: whoever sees the row finds the lock held.
        if not _first_value(conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,))):
            raise psycopg.OperationalError(
                f"the lock of executor {self.executor_id} is held by another session "
                "(it is being recovered after this process lost its connection)"
            )
        inserted = conn.execute(
            "INSERT INTO workrail.executors(executor_id, lock_key, host, pid, started_at) VALUES (%s, %s, %s, %s, %s)"
            " ON CONFLICT (executor_id) DO NOTHING RETURNING executor_id",
            (self.executor_id, self._key, socket.gethostname(), os.getpid(), self._started_at),
        ).fetchone()
        if not first and inserted is not None:
            log.error(
                "executor %s was declared dead while its connection was lost; another process may have "
                "recovered its runs",
                self.executor_id,
            )

    def _try_lock(self, conn: psycopg.Connection, executor_id: str, key: int) -> bool:
        """Take the lock of a registered executor if it is free and its row is still there."""
        if not _first_value(conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))):
            return False
        if conn.execute(
            "SELECT 1 FROM workrail.executors WHERE executor_id = %s", (executor_id,)
        ).fetchone():
            return True
        _unlock(conn, key)  # forgotten by another claimer meanwhile
        return False

    def _release(self, conn: psycopg.Connection, executor_ids: list[str]) -> None:
        for executor_id in executor_ids:
            key = self._claimed.pop(executor_id, None)
            if key is not None:
                _unlock(conn, key)


def _unlock(conn: psycopg.Connection, key: int) -> None:
    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
