"""The step journal: a checkpoint per command-step attempt, with the step's result.

A run is a DBOS workflow — its input, status, events, agent messages, queue, cancellation and
recovery are DBOS's — but its command steps are not DBOS steps. A DBOS step costs two
transactions built through SQLAlchemy (≈ 3–5 ms of Python each on our CI machine) where spawning
``true`` costs ≈ 1 ms, so a run of short commands spent most of its time checkpointing. The
journal writes the same facts through the database driver itself, in the same database as
DBOS's tables: one INSERT per step (≈ 0.07 ms on SQLite in WAL mode), holding the outcome of the
step's last attempt and the step's result.

Recovery works as with DBOS steps: DBOS runs the workflow function again, the walk asks for each
attempt in the same order, and the journal hands back the recorded outcome instead of running
the command again. An attempt's outcome is written with the step's result, or before any pause
(a retry delay, a wait for the agent, a state change), so nothing that completed is lost: a crash
between the attempt and its row can only make the step run again, as a crash inside a DBOS step
would.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .sqlite_store import configure_connection

__all__ = ["Journal"]

log = logging.getLogger(__name__)
T = TypeVar("T")
RECONNECT_FOR = 120.0  # seconds a lost Postgres connection is tried again before a step fails

# One row per attempt; the step's result rides on the row of its last attempt (attempt 0 for a
# step that has none: skipped, or answered by the agent), so a step costs one INSERT.
_COLUMNS = (
    "run_id TEXT NOT NULL, step_key TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " outcome TEXT, result TEXT, UNIQUE (run_id, step_key, attempt)"
)
_SQLITE_TABLES = (
    # INTEGER PRIMARY KEY, not AUTOINCREMENT: rows are never deleted, so rowids only grow, and
    # AUTOINCREMENT's extra bookkeeping row costs a third of each commit.
    f"CREATE TABLE IF NOT EXISTS workrail_journal (position INTEGER PRIMARY KEY, {_COLUMNS})",
)
_POSTGRES_TABLES = (
    "CREATE SCHEMA IF NOT EXISTS workrail",
    f"CREATE TABLE IF NOT EXISTS workrail.journal (position BIGSERIAL PRIMARY KEY, {_COLUMNS})",
)
_DDL_LOCK = 0x776F726B7261696C  # "workrail": serializes CREATE … IF NOT EXISTS between processes
_UPSERT = (
    "INSERT INTO {journal} (run_id, step_key, attempt, outcome, result) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id, step_key, attempt) DO UPDATE SET outcome = excluded.outcome, result = excluded.result"
)


class Journal:
    """One connection per process, shared by its runs' threads under a lock (each use is short)."""

    def __init__(self, url: str, dbos_schema: str = "dbos") -> None:
        self.postgres = not url.startswith("sqlite")
        self._lock = threading.Lock()
        # Attempt outcomes not written yet, by (run id, step key): see `add_attempt`.
        self._pending: dict[tuple[str, str], tuple[int, str]] = {}
        self._compiled: dict[str, str] = {}
        self._writes = 0
        self._closing = threading.Event()
        if self.postgres:
            self._url = url
            self._conn: Any = self._connect()
            self._names = {
                "journal": "workrail.journal",
                "status": f'"{dbos_schema}".workflow_status',
            }
            with self._transaction() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
                for statement in _POSTGRES_TABLES:
                    cur.execute(statement)
        else:
            self._conn = sqlite3.connect(
                url.removeprefix("sqlite:///"),
                isolation_level=None,
                check_same_thread=False,
                timeout=30,
            )
            configure_connection(self._conn)
            self._conn.execute("PRAGMA wal_autocheckpoint=0")  # see `_checkpoints`
            threading.Thread(
                target=self._checkpoints,
                args=(url.removeprefix("sqlite:///"),),
                name="workrail-journal-checkpoints",
                daemon=True,
            ).start()
            self._names = {"journal": "workrail_journal", "status": "workflow_status"}
            with self._transaction() as cur:
                for statement in _SQLITE_TABLES:
                    cur.execute(statement)

    def _connect(self) -> Any:
        import psycopg

        from .pg_liveness import connection_parameters

        conn = psycopg.connect(
            **connection_parameters(self._url, "workrail-journal"), autocommit=True
        )
        # As with SQLite's synchronous=NORMAL: a commit is not flushed to disk before it returns,
        # which survives any crash of our processes (the server has the row) and can only lose
        # the last commits if the database server itself crashes — never corrupt anything.
        # Flushing each step's row cost 2–3 ms a step here. WORKRAIL_POSTGRES_SYNCHRONOUS_COMMIT=on
        # flushes every commit.
        synchronous = os.environ.get("WORKRAIL_POSTGRES_SYNCHRONOUS_COMMIT", "off").lower()
        conn.execute(
            "SELECT set_config('synchronous_commit', %s, false)",
            (synchronous if synchronous in ("on", "off", "local", "remote_write") else "off",),
        )
        return conn

    def _again(self, action: Callable[[], T]) -> T:
        """Postgres: a server restart or a failover ends the session. Connect again and repeat —
        every write here is an upsert and every read a read, so a repeat is harmless — for up to
        ``RECONNECT_FOR`` seconds, as DBOS does for its own queries, before giving up."""
        if not self.postgres:
            return action()
        import psycopg

        give_up = time.monotonic() + RECONNECT_FOR
        pause = 0.2
        while True:
            try:
                return action()
            except psycopg.OperationalError:
                if time.monotonic() >= give_up:
                    raise
                log.warning("the run store's connection was lost; connecting again")
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
                try:
                    self._conn.close()
                    self._conn = self._connect()
                except psycopg.OperationalError:
                    continue  # the server is not back yet

    def close(self) -> None:
        self._closing.set()
        with self._lock:
            self._flush()
            self._conn.close()

    def _checkpoints(self, path: str) -> None:
        """SQLite: move the write-ahead log into the database now and then, from a connection of
        its own, instead of in the middle of a step's commit (SQLite's automatic checkpoint costs
        that commit 10–20 ms every thousand pages; on average a third of a commit's time)."""
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        try:
            configure_connection(conn)
            seen = 0
            while not self._closing.wait(1.0):
                if self._writes - seen >= 100:
                    seen = self._writes
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:  # a store gone (tests delete theirs): nothing left to checkpoint
            pass
        finally:
            conn.close()

    # --- SQL plumbing: `?` placeholders, table names by role -----------------------------------

    def _sql(self, text: str) -> str:
        compiled = self._compiled.get(text)
        if compiled is None:
            compiled = text.format(**self._names)
            compiled = self._compiled[text] = (
                compiled.replace("?", "%s") if self.postgres else compiled
            )
        return compiled

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        """A write transaction (the caller holds ``_lock``, or nobody else has the connection)."""
        if self.postgres:
            with self._conn.transaction(), self._conn.cursor() as cur:
                yield cur
            return
        cur = self._conn.cursor()
        cur.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlock with DBOS
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def _read(self, text: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._fetch(text, args)

    def _fetch(self, text: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """A query (the caller holds ``_lock``)."""
        if self.postgres:

            def query() -> list[tuple[Any, ...]]:
                with self._conn.cursor() as cur:
                    cur.execute(self._sql(text), args)
                    return list(cur.fetchall())

            return self._again(query)
        return list(self._conn.execute(self._sql(text), args).fetchall())

    def _execute(self, text: str, rows: list[tuple[Any, ...]]) -> None:
        """Write ``rows`` in one transaction (the caller holds ``_lock``)."""
        if len(rows) == 1 and not self.postgres:
            self._conn.execute(self._sql(text), rows[0])  # one statement: its own transaction
            return

        def write() -> None:
            with self._transaction() as cur:
                cur.executemany(self._sql(text), rows)

        self._again(write)

    def _flush(self) -> None:
        if self._pending:
            rows = [
                (run_id, key, attempt, outcome, None)
                for (run_id, key), (attempt, outcome) in self._pending.items()
            ]
            self._pending.clear()
            self._execute(_UPSERT, rows)

    # --- what the runs use ----------------------------------------------------------------

    def attempts(self, run_id: str) -> dict[tuple[str, int], dict[str, Any] | None]:
        """The recorded attempts of a run: outcome, or None for one marked in flight."""
        rows = self._read(
            "SELECT step_key, attempt, outcome FROM {journal} WHERE run_id = ? AND attempt > 0",
            (run_id,),
        )
        return {
            (key, attempt): (json.loads(outcome) if outcome is not None else None)
            for key, attempt, outcome in rows
        }

    def mark(self, run_id: str, key: str, attempt: int) -> None:
        """Record, durably and before it starts, that an attempt is in flight (``idempotent: false``)."""
        with self._lock:
            self._flush()
            self._execute(
                "INSERT INTO {journal} (run_id, step_key, attempt) VALUES (?, ?, ?)"
                " ON CONFLICT (run_id, step_key, attempt) DO NOTHING",
                [(run_id, key, attempt)],
            )

    def add_attempt(self, run_id: str, key: str, attempt: int, outcome: dict[str, Any]) -> None:
        """An attempt's outcome, held until the step's result (one row for both) or a `flush`.

        Between the two nothing leaves the process, so a crash in between can only make the
        step run again — as a crash during the attempt would."""
        with self._lock:
            self._pending[(run_id, key)] = (attempt, json.dumps(outcome))

    def add_result(self, run_id: str, key: str, result: dict[str, Any]) -> str | None:
        """A step's result, on the row of its last attempt; written now. Returns the run's DBOS
        status read right after (so the next step need not ask again whether it was cancelled)."""
        with self._lock:
            attempt, outcome = self._pending.pop((run_id, key), (0, None))
            self._flush()
            self._writes += 1
            # One statement for both (one round trip to a Postgres server; it commits on its own).
            found = self._fetch(
                _UPSERT + " RETURNING (SELECT status FROM {status} WHERE workflow_uuid = ?)",
                (run_id, key, attempt, outcome, json.dumps(result), run_id),
            )
        return found[0][0] if found else None

    def flush(self) -> None:
        """Make the attempts held so far durable (before a pause, a wait, a state change)."""
        with self._lock:
            self._flush()

    def recorded_keys(self, run_id: str) -> set[str]:
        rows = self._read(
            "SELECT step_key FROM {journal} WHERE run_id = ? AND result IS NOT NULL", (run_id,)
        )
        return {key for (key,) in rows}

    def results(self, run_id: str) -> list[dict[str, Any]]:
        """A run's step results in the order they were recorded."""
        rows = self._read(
            "SELECT result FROM {journal} WHERE run_id = ? AND result IS NOT NULL ORDER BY position",
            (run_id,),
        )
        return [json.loads(result) for (result,) in rows]

    def statuses(self, run_ids: list[str]) -> dict[str, str]:
        """DBOS's status of each run (read from its table: one indexed query, no ORM)."""
        if not run_ids:
            return {}
        marks = ", ".join("?" * len(run_ids))
        rows = self._read(
            f"SELECT workflow_uuid, status FROM {{status}} WHERE workflow_uuid IN ({marks})",
            tuple(run_ids),
        )
        return dict(rows)

    def owns_pending(self, executor_id: str) -> bool:
        """Whether runs (or members) are pending on this executor: its lock file must then stay,
        so that the next process recovers them."""
        rows = self._read(
            "SELECT 1 FROM {status} WHERE executor_id = ? AND status = 'PENDING' LIMIT 1",
            (executor_id,),
        )
        return bool(rows)
