"""The step journal: a checkpoint per command-step attempt and a row per step result.

A run is a DBOS workflow — its input, status, events, agent messages, queue, cancellation and
recovery are DBOS's — but its command steps are not DBOS steps. A DBOS step costs two
transactions built through SQLAlchemy (≈ 3–5 ms of Python each on our CI machine) where spawning
``true`` costs ≈ 1 ms, so a run of short commands spent most of its time checkpointing. The
journal writes the same facts through the database driver itself, in one short transaction per
step (≈ 0.08 ms on SQLite in WAL mode), in the same database as DBOS's tables.

Recovery works as with DBOS steps: DBOS runs the workflow function again, the walk asks for each
attempt in the same order, and the journal hands back the recorded outcome instead of running
the command again. An attempt's outcome is written in the same transaction as the step's result
(or before any pause), so nothing that completed is lost: a crash between the two can only make
the step run again, as a crash inside a DBOS step would.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .sqlite_store import configure_connection

__all__ = ["Journal"]

_SQLITE_TABLES = (
    "CREATE TABLE IF NOT EXISTS workrail_attempts (run_id TEXT NOT NULL, step_key TEXT NOT NULL,"
    " attempt INTEGER NOT NULL, outcome TEXT, PRIMARY KEY (run_id, step_key, attempt))",
    "CREATE TABLE IF NOT EXISTS workrail_step_results (position INTEGER PRIMARY KEY AUTOINCREMENT,"
    " run_id TEXT NOT NULL, step_key TEXT NOT NULL, result TEXT NOT NULL, UNIQUE (run_id, step_key))",
)
_POSTGRES_TABLES = (
    "CREATE SCHEMA IF NOT EXISTS workrail",
    "CREATE TABLE IF NOT EXISTS workrail.attempts (run_id TEXT NOT NULL, step_key TEXT NOT NULL,"
    " attempt INTEGER NOT NULL, outcome TEXT, PRIMARY KEY (run_id, step_key, attempt))",
    "CREATE TABLE IF NOT EXISTS workrail.step_results (position BIGSERIAL PRIMARY KEY,"
    " run_id TEXT NOT NULL, step_key TEXT NOT NULL, result TEXT NOT NULL, UNIQUE (run_id, step_key))",
)
_DDL_LOCK = 0x776F726B7261696C  # "workrail": serializes CREATE … IF NOT EXISTS between processes


class Journal:
    """One connection per process, shared by its runs' threads under a lock (each use is short)."""

    def __init__(self, url: str, dbos_schema: str = "dbos") -> None:
        self.postgres = not url.startswith("sqlite")
        self._lock = threading.Lock()
        self._pending: list[tuple[str, tuple]] = []
        if self.postgres:
            import psycopg

            self._conn: Any = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1),
                                              autocommit=True)
            self._names = {"attempts": "workrail.attempts", "results": "workrail.step_results",
                           "status": f'"{dbos_schema}".workflow_status'}
            with self._transaction() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
                for statement in _POSTGRES_TABLES:
                    cur.execute(statement)
        else:
            self._conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None,
                                         check_same_thread=False, timeout=30)
            configure_connection(self._conn)
            self._names = {"attempts": "workrail_attempts", "results": "workrail_step_results",
                           "status": "workflow_status"}
            with self._transaction() as cur:
                for statement in _SQLITE_TABLES:
                    cur.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._flush()
            self._conn.close()

    # --- SQL plumbing: `?` placeholders, table names by role -----------------------------------

    def _sql(self, text: str) -> str:
        text = text.format(**self._names)
        return text.replace("?", "%s") if self.postgres else text

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

    def _read(self, text: str, args: tuple) -> list[tuple]:
        with self._lock:
            if self.postgres:
                with self._conn.cursor() as cur:
                    cur.execute(self._sql(text), args)
                    return cur.fetchall()
            return self._conn.execute(self._sql(text), args).fetchall()

    def _flush(self) -> None:
        if self._pending:
            with self._transaction() as cur:
                for text, args in self._pending:
                    cur.execute(self._sql(text), args)
            self._pending.clear()

    def _write(self, text: str, args: tuple, *, now: bool) -> None:
        with self._lock:
            self._pending.append((text, args))
            if now:
                self._flush()

    # --- what the runs use ----------------------------------------------------------------

    def attempts(self, run_id: str) -> dict[tuple[str, int], dict | None]:
        """The recorded attempts of a run: outcome, or None for one marked in flight."""
        rows = self._read("SELECT step_key, attempt, outcome FROM {attempts} WHERE run_id = ?", (run_id,))
        return {(key, attempt): (json.loads(outcome) if outcome is not None else None)
                for key, attempt, outcome in rows}

    def mark(self, run_id: str, key: str, attempt: int) -> None:
        """Record, durably and before it starts, that an attempt is in flight (``idempotent: false``)."""
        self._write("INSERT INTO {attempts} (run_id, step_key, attempt, outcome) VALUES (?, ?, ?, NULL)"
                    " ON CONFLICT (run_id, step_key, attempt) DO NOTHING", (run_id, key, attempt), now=True)

    def add_attempt(self, run_id: str, key: str, attempt: int, outcome: dict) -> None:
        """An attempt's outcome, written with the next result (or `flush`): see the module doc."""
        self._write("INSERT INTO {attempts} (run_id, step_key, attempt, outcome) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (run_id, step_key, attempt) DO UPDATE SET outcome = excluded.outcome",
                    (run_id, key, attempt, json.dumps(outcome)), now=False)

    def add_result(self, run_id: str, key: str, result: dict) -> None:
        """A step's result (first one wins: a replay records the same result again)."""
        self._write("INSERT INTO {results} (run_id, step_key, result) VALUES (?, ?, ?)"
                    " ON CONFLICT (run_id, step_key) DO NOTHING", (run_id, key, json.dumps(result)), now=True)

    def flush(self) -> None:
        """Make the attempts written so far durable (before a pause, a wait, a state change)."""
        with self._lock:
            self._flush()

    def recorded_keys(self, run_id: str) -> set[str]:
        return {key for (key,) in self._read("SELECT step_key FROM {results} WHERE run_id = ?", (run_id,))}

    def results(self, run_id: str) -> list[dict]:
        """A run's step results in the order they were recorded."""
        rows = self._read("SELECT result FROM {results} WHERE run_id = ? ORDER BY position", (run_id,))
        return [json.loads(result) for (result,) in rows]

    def statuses(self, run_ids: list[str]) -> dict[str, str]:
        """DBOS's status of each run (read from its table: one indexed query, no ORM)."""
        if not run_ids:
            return {}
        marks = ", ".join("?" * len(run_ids))
        rows = self._read(f"SELECT workflow_uuid, status FROM {{status}} WHERE workflow_uuid IN ({marks})",
                          tuple(run_ids))
        return dict(rows)
