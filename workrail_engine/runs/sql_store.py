"""One connection to the run store through the database driver itself (no ORM): SQLite or Postgres.

The step journal and the session store both write to the run store's database next to DBOS's
tables, and the run history reads all of them (read-only). Their SQL is written once with ``?`` placeholders and ``{name}`` table names; this class
compiles it for the dialect, holds the one connection under a lock, and on Postgres connects
again after a server restart or failover (every write of theirs is an upsert or guarded, so a
repeat is harmless).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import quote

from .sqlite_store import configure_connection

__all__ = ["RECONNECT_FOR", "SqlStore", "add_columns", "dbos_tables"]

log = logging.getLogger(__name__)
T = TypeVar("T")
RECONNECT_FOR = 120.0  # seconds a lost Postgres connection is tried again before a call fails
DDL_LOCK = 0x776F726B7261696C  # "workrail": serializes CREATE … IF NOT EXISTS between processes


def dbos_tables(schema: str = "dbos") -> dict[str, tuple[str, str]]:
    """DBOS's tables our SQL reads, by role: (SQLite name, Postgres name)."""
    return {
        "status": ("workflow_status", f'"{schema}".workflow_status'),
        "events": ("workflow_events", f'"{schema}".workflow_events'),
        "input": ("workflow_input", f'"{schema}".workflow_input'),
    }


def add_columns(
    cur: Any, postgres: bool, names: Mapping[str, str], added: Mapping[str, tuple[str, ...]]
) -> None:
    """Add each column of ``added`` (role → ``"name TYPE"`` definitions) its table lacks: a
    store written by an older version gains them in place, its rows kept (the new columns NULL:
    readers treat NULL as "not recorded"). Postgres says IF NOT EXISTS; SQLite cannot, so its
    table's columns are read first (both run under the DDL lock or SQLite's write lock)."""
    for role, columns in added.items():
        table = names[role]
        if postgres:
            for column in columns:
                cur.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column}")
            continue
        present = {row[1] for row in cur.execute(f"PRAGMA table_info({table})").fetchall()}
        for column in columns:
            if column.split()[0] not in present:
                cur.execute(f"ALTER TABLE {table} ADD COLUMN {column}")


class SqlStore:
    """A connection to the store at ``url`` (``sqlite:///path`` or a Postgres URL), with table
    names by role (``names``) and the DDL of each dialect run once on open."""

    application_name = "workrail"

    def __init__(
        self,
        url: str,
        names: dict[str, tuple[str, str]],
        sqlite_tables: tuple[str, ...] = (),
        postgres_tables: tuple[str, ...] = (),
        *,
        read_only: bool = False,
        added_columns: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        """``names``: role → (SQLite name, Postgres name). ``read_only``: a reader (`RunHistory`)
        creates nothing and connects at its first read (SQLite read-only: a store no run has
        created yet stays absent). ``added_columns``: role → column definitions (``"name
        TYPE"``) added to a table after it was first created, added in place to a store made
        before them (`add_columns`) in the same transaction as the tables."""
        self.postgres = not url.startswith("sqlite")
        self.read_only = read_only
        self._url = url
        self._lock = threading.Lock()
        self._compiled: dict[str, str] = {}
        self._names = {role: pair[1 if self.postgres else 0] for role, pair in names.items()}
        self._conn: Any = None
        if read_only:
            return
        if self.postgres:

            def open_store() -> None:
                # A process started while the server restarts waits for it, as a running one does.
                with self._transaction() as cur:
                    cur.execute("SELECT pg_advisory_xact_lock(%s)", (DDL_LOCK,))
                    for statement in postgres_tables:
                        cur.execute(statement)
                    add_columns(cur, True, self._names, added_columns or {})

            self._again(open_store)
        else:
            self._conn = self._connect_sqlite()
            with self._transaction() as cur:
                for statement in sqlite_tables:
                    cur.execute(statement)
                add_columns(cur, False, self._names, added_columns or {})

    def _connect_sqlite(self) -> sqlite3.Connection:
        path = self._url.removeprefix("sqlite:///")
        if self.read_only:
            conn = sqlite3.connect(
                f"file:{quote(path)}?mode=ro", uri=True, check_same_thread=False, timeout=30
            )
            conn.execute("PRAGMA busy_timeout=30000")
            return conn
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        configure_connection(conn)
        return conn

    def _connect(self) -> Any:
        import psycopg

        from .pg_liveness import connection_parameters

        conn = psycopg.connect(
            **connection_parameters(self._url, self.application_name), autocommit=True
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
        """Postgres: a server restart or a failover ends the session. Connect again and repeat
        for up to ``RECONNECT_FOR`` seconds, as DBOS does for its own queries, before giving up."""
        if not self.postgres:
            return action()
        import psycopg

        give_up = time.monotonic() + RECONNECT_FOR
        pause = 0.2
        while True:
            try:
                # (None after a reconnect that failed: the server was not back yet)
                if self._conn is None:
                    self._conn = self._connect()
                return action()
            except psycopg.OperationalError:
                if time.monotonic() >= give_up:
                    raise
                log.warning("the run store's connection was lost; connecting again")
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
                if self._conn is not None:
                    self._conn.close()
                self._conn = None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # a reader's next read connects again

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
            self._settle()
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

    def _settle(self) -> None:
        """Postgres: read the answer to a statement sent without waiting for it, if any, before
        the connection is used again (the caller holds ``_lock``). None here: see the journal."""

    def _fetch(self, text: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """A query (the caller holds ``_lock``)."""
        if self.postgres:
            self._settle()

            def query() -> list[tuple[Any, ...]]:
                with self._conn.cursor() as cur:
                    cur.execute(self._sql(text), args)
                    return list(cur.fetchall())

            return self._again(query)
        if self._conn is None:  # a reader's first read
            self._conn = self._connect_sqlite()
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

    def _atomically(self, steps: Callable[[Callable[[str, tuple[Any, ...]], Any]], T]) -> T:
        """``steps(run)`` in one write transaction, where ``run(sql, args)`` executes a statement
        and returns its cursor; repeated whole after a lost Postgres connection."""

        def attempt() -> T:
            with self._lock, self._transaction() as cur:

                def run(text: str, args: tuple[Any, ...]) -> Any:
                    cur.execute(self._sql(text), args)
                    return cur

                return steps(run)

        return self._again(attempt)
