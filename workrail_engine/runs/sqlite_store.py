"""The SQLite engine under the run store: WAL, and how hard each commit is pushed to disk.

DBOS's own SQLite engine keeps SQLite's default rollback journal, which costs several fsyncs per
commit (measured here: ~14 ms per commit, ~100 ms per step). In WAL mode a commit is one append;
with ``synchronous=NORMAL`` it is not fsynced at once, which survives any crash of the process
(``kill -9``) and can only lose the last commits on an operating-system crash or power loss —
the database stays consistent. ``WORKRAIL_SQLITE_SYNCHRONOUS=FULL`` fsyncs every commit.
"""

from __future__ import annotations

import os
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

__all__ = ["sqlite_engine"]


def sqlite_engine(url: str) -> sa.Engine:
    synchronous = os.environ.get("WORKRAIL_SQLITE_SYNCHRONOUS", "NORMAL").upper()
    if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        synchronous = "NORMAL"
    engine = sa.create_engine(url, pool_size=20, max_overflow=0, pool_timeout=30)

    @event.listens_for(engine, "connect")
    def configure(dbapi_conn: Any, _record: Any) -> None:
        # the same settings DBOS gives its own SQLite engine: serialized writers, patient locks
        dbapi_conn.isolation_level = "IMMEDIATE"
        dbapi_conn.execute("PRAGMA busy_timeout=30000")
        dbapi_conn.execute("PRAGMA foreign_keys=ON")
        dbapi_conn.execute("PRAGMA journal_mode=WAL")
        dbapi_conn.execute(f"PRAGMA synchronous={synchronous}")

    return engine
