"""The SQLite settings under the run store: WAL, and how hard each commit is pushed to disk.

DBOS's own SQLite engine keeps SQLite's default rollback journal, which costs several fsyncs per
commit (measured here: ~14 ms per commit, ~100 ms per step). In WAL mode a commit is one append;
with ``synchronous=NORMAL`` it is not fsynced at once, which survives any crash of the process
(``kill -9``) and can only lose the last commits on an operating-system crash or power loss —
the database stays consistent. ``WORKRAIL_SQLITE_SYNCHRONOUS=FULL`` fsyncs every commit.

Both connections to the file — DBOS's (through SQLAlchemy) and the step journal's (the driver
itself) — get the same settings from `configure_connection`.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

__all__ = ["configure_connection", "sqlite_engine"]


def configure_connection(conn: sqlite3.Connection) -> None:
    synchronous = os.environ.get("WORKRAIL_SQLITE_SYNCHRONOUS", "NORMAL").upper()
    if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        synchronous = "NORMAL"
    # the same settings DBOS gives its own SQLite engine: patient locks, foreign keys
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")


def sqlite_engine(url: str) -> sa.Engine:
    engine = sa.create_engine(url, pool_size=20, max_overflow=0, pool_timeout=30)

    @event.listens_for(engine, "connect")
    def configure(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = "IMMEDIATE"  # serialized writers, as DBOS does
        configure_connection(dbapi_conn)

    return engine
