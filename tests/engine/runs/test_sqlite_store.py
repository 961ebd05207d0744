"""The SQLite settings every connection to the run store gets (`configure_connection`)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from workrail_engine.runs.sqlite_store import configure_connection


def test_switching_a_new_store_to_wal_waits_for_a_writer_instead_of_failing(tmp_path: Path):
    # SQLite answers the journal_mode pragma "database is locked" at once, without its busy
    # handler, while another connection writes: two run tools called together on a server with
    # no store yet had one of them fail that way.
    path = tmp_path / "runs.sqlite"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    threading.Timer(0.3, writer.commit).start()
    opened = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    started = time.monotonic()
    configure_connection(opened)
    assert time.monotonic() - started >= 0.2  # it waited for the writer, then switched
    assert opened.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    writer.close()
    opened.close()
