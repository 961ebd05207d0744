"""The step journal on SQLite: what a step's result costs besides its row."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time

from workrail_engine.runs.journal import Journal, _beside_result, _not_in_result

RESULT = {"step_name": "a", "status": "success", "output": None, "duration": 0.0}


def test_a_result_reads_the_run_status_again_only_once_another_connection_committed(tmp_path):
    path = tmp_path / "runs.sqlite"
    dbos = sqlite3.connect(path, isolation_level=None)  # where DBOS keeps a run's status
    dbos.execute("CREATE TABLE workflow_status (workflow_uuid TEXT PRIMARY KEY, status TEXT)")
    dbos.execute("INSERT INTO workflow_status VALUES ('wf-1', 'PENDING')")
    journal = Journal(f"sqlite:///{path}")
    statements: list[str] = []
    journal._conn.set_trace_callback(statements.append)
    try:
        assert journal.add_result("wf-1", "a", RESULT)() == "PENDING"
        assert any("workflow_status" in s for s in statements)

        statements.clear()  # nothing committed elsewhere since: the status is known
        assert journal.add_result("wf-1", "b", RESULT)() == "PENDING"
        assert not any("workflow_status" in s for s in statements), statements

        # cancelled by another process (the CLI's `workrail cancel`, say)
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
                " c.execute(\"UPDATE workflow_status SET status = 'CANCELLED'\"); c.commit()",
                str(path),
            ],
            check=True,
        )
        assert journal.add_result("wf-1", "c", RESULT)() == "CANCELLED"

        dbos.execute("INSERT INTO workflow_status VALUES ('wf-2', 'PENDING')")  # in this process
        statements.clear()
        assert journal.add_result("wf-2", "a", RESULT)() == "PENDING"
        assert any("workflow_status" in s for s in statements)
        assert journal.add_result("wf-3", "a", RESULT)() is None  # not in DBOS's table (yet)
        assert [r["step_name"] for r in journal.results("wf-1")] == ["a", "a", "a"]
    finally:
        journal.close()
        dbos.close()


def test_the_last_attempt_is_stored_beside_its_result_without_what_the_result_says(tmp_path):
    path = tmp_path / "runs.sqlite"
    dbos = sqlite3.connect(path, isolation_level=None)
    dbos.execute("CREATE TABLE workflow_status (workflow_uuid TEXT PRIMARY KEY, status TEXT)")
    journal = Journal(f"sqlite:///{path}")
    output = {"exit_code": 1, "stdout": "", "stderr": "no", "duration": 0.0012}
    first = {"status": "failed", "output": output, "error": "exited with status 1"}
    last = {**first, "duration": 0.0012, "finished_at": 1733000000.123456}
    try:
        journal.add_attempt("wf-1", "a", 1, {**first, "duration": 0.5, "finished_at": 1.0})
        journal.flush()  # a retry's pause: the first attempt written whole
        journal.add_attempt("wf-1", "a", 2, last)
        result = {
            "step_name": "a",
            "status": "failed",
            "output": output,
            "duration": 0.5012,
            "attempts": 2,
            "error": "exited with status 1; no time left for another attempt",
        }
        journal.add_result("wf-1", "a", result)
        stored = dict(dbos.execute("SELECT attempt, outcome FROM workrail_journal").fetchall())
        assert json.loads(stored[1])["output"] == output
        # what the result does not say: its end, its own duration, the error as it was
        assert json.loads(stored[2]) == {
            "finished_at": 1733000000.123456,
            "duration": 0.0012,
            "error": "exited with status 1",
        }
        recorded = journal.recorded("wf-1").attempts
        assert recorded[("a", 2)] == last
        assert recorded[("a", 1)] == {**first, "duration": 0.5, "finished_at": 1.0}
    finally:
        journal.close()
        dbos.close()


def test_a_plain_attempt_is_kept_beside_its_result_as_the_key_by_key_path_keeps_it():
    output = {"exit_code": 0, "stdout": "", "stderr": "", "duration": 0.0012}
    plain = {"status": "success", "output": output, "duration": 0.0012, "finished_at": 17.5}
    one = {"step_name": "a", "status": "success", "output": output, "duration": 0.0012}
    cases = [
        (plain, one),  # the shortcut's case
        (plain, {**one, "attempts": 2, "duration": 0.5}),  # a retried step: its duration kept
        (plain, {**one, "output": dict(output)}),  # an equal output, not the same object
        (plain, {**one, "error": "worded otherwise"}),  # an error the outcome has not
        (plain, {**one, "validation": None}),
        ({**plain, "deadline": True}, {**one, "deadline": True}),
    ]
    for outcome, result in cases:
        assert _beside_result(outcome, result) == _not_in_result(outcome, result), result
    assert _beside_result(plain, one) == {"finished_at": 17.5}


def _wal_frames(path) -> tuple[int, int]:
    """(frames in the write-ahead log, frames of them copied into the database), from the
    WAL-index header in the ``-shm`` file (sqlite.org/walformat.html: ``mxFrame`` at byte 16,
    ``nBackfill`` at byte 96, native byte order) — read without a checkpoint of our own."""
    header = (path.parent / f"{path.name}-shm").read_bytes()[:100]
    frames, copied = header[16:20], header[96:100]
    return int.from_bytes(frames, sys.byteorder), int.from_bytes(copied, sys.byteorder)


def test_what_dbos_commits_is_checkpointed_by_the_journal_and_not_in_its_own_commit(tmp_path):
    from workrail_engine.runs.sqlite_store import sqlite_engine

    path = tmp_path / "runs.sqlite"
    journal = Journal(f"sqlite:///{path}")
    engine = sqlite_engine(f"sqlite:///{path}")  # DBOS's
    try:
        with engine.connect() as dbos:
            raw = dbos.connection.dbapi_connection
            assert raw is not None
            assert raw.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
            raw.execute("CREATE TABLE events (x)")
            raw.execute("BEGIN IMMEDIATE")
            raw.executemany("INSERT INTO events VALUES (?)", [("x" * 2000,)] * 2000)
            raw.execute("COMMIT")
        frames, copied = _wal_frames(path)
        assert frames > 1000 and copied < frames  # past SQLite's own threshold, not checkpointed
        deadline = time.monotonic() + 5
        while _wal_frames(path)[1] < frames and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _wal_frames(path) == (frames, frames)  # the journal's thread copied them all
    finally:
        engine.dispose()
        journal.close()
