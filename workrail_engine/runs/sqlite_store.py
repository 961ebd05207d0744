"""The SQLite settings under the run store: WAL, and how hard each commit is pushed to disk.

DBOS's own SQLite engine keeps SQLite's default rollback journal, which costs several fsyncs per
commit (measured here: ~14 ms per commit, ~100 ms per step). In WAL mode a commit is one append;
with ``synchronous=NORMAL`` it is not fsynced at once, which survives any crash of the process
(``kill -9``) and can only lose the last commits on an operating-system crash or power loss —
the database stays consistent. ``WORKRAIL_SQLITE_SYNCHRONOUS=FULL`` fsyncs every commit.

Both connections to the file — DBOS's (through SQLAlchemy) and the step journal's (the driver
itself) — get the same settings from `configure_connection`.

The store is private to its user (`make_private`): the directory 0700, the database 0600. SQLite
gives its ``-wal`` and ``-shm`` files the mode of the database file whatever the umask, so
creating the database file first, 0600, is what makes them 0600 too.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # SQLAlchemy is DBOS's: loaded with the durable layer, not by its readers
    import sqlalchemy as sa

__all__ = ["DATABASE", "configure_connection", "make_private", "sqlite_engine"]

DATABASE = "runs.sqlite"


def configure_connection(conn: sqlite3.Connection) -> None:
    synchronous = os.environ.get("WORKRAIL_SQLITE_SYNCHRONOUS", "NORMAL").upper()
    if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        synchronous = "NORMAL"
    # the same settings DBOS gives its own SQLite engine: patient locks, foreign keys
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA foreign_keys=ON")
    _switch_to_wal(conn)
    conn.execute(f"PRAGMA synchronous={synchronous}")


def _switch_to_wal(conn: sqlite3.Connection, patience: float = 30.0) -> None:
    """``journal_mode=WAL``, waiting for the file like every other statement does. SQLite does not
    call the busy handler for this pragma: two connections opening a new store at once (a
    server's first run tools called together, a CLI beside a server) had the second fail at
    once with "database is locked". Once the file is in WAL mode the pragma takes no lock."""
    end = time.monotonic() + patience
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= end:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def sqlite_engine(url: str) -> sa.Engine:
    import sqlalchemy as sa
    from sqlalchemy import event

    engine = sa.create_engine(url, pool_size=20, max_overflow=0, pool_timeout=30)

    @event.listens_for(engine, "connect")
    def configure(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = "IMMEDIATE"  # serialized writers, as DBOS does
        configure_connection(dbapi_conn)
        # Checkpoints are the journal's thread's (`Journal._checkpoints`; this engine is made only
        # beside a journal): SQLite's own would run in the DBOS commit that finds the log past a
        # thousand pages — after a run of a thousand steps, its end's, 5–10 ms.
        dbapi_conn.execute("PRAGMA wal_autocheckpoint=0")

    return engine


def make_private(home: Path, sqlite: bool) -> None:
    """The store's directory 0700 and, on SQLite, its database files 0600 — created so, and
    tightened when they exist readable by others (a directory made by hand, the WAL and shared
    memory files SQLite creates under the process's umask)."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    paths = [home]
    if sqlite:
        database = home / DATABASE
        os.close(os.open(database, os.O_CREAT | os.O_WRONLY, 0o600))
        paths += [database, home / f"{DATABASE}-wal", home / f"{DATABASE}-shm"]
    for path in paths:
        try:
            os.chmod(path, 0o700 if path == home else 0o600)
        except FileNotFoundError:
            pass
        except PermissionError:  # another user's store, shared on purpose: left as it is
            pass
