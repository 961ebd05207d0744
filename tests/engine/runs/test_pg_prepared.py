"""The step result's statement through libpq itself (pg_prepared.py), on a real PostgreSQL server
(the ``postgres_url`` fixture in tests/conftest.py): its answers, its errors, a new connection,
and the journal's reconnect when the server ends the session under it."""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest

from workrail_engine.runs.journal import Journal
from workrail_engine.runs.pg_prepared import PreparedStatement

pytestmark = pytest.mark.slow


@pytest.fixture
def status_schema(postgres_url):
    """A table shaped as DBOS's run statuses, in a schema of the test's own."""
    schema = f"status_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        admin.execute(
            f"CREATE TABLE {schema}.workflow_status (workflow_uuid TEXT PRIMARY KEY, status TEXT)"
        )
    return schema


def test_rows_nulls_and_numbers_come_back_as_psycopg_would_read_them_as_text(postgres_url):
    statement = PreparedStatement(
        "SELECT %s::int + 1, %s::text, NULL::text UNION ALL SELECT 7, %s, 'x'"
    )
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert statement.fetch(conn, (41, None, "b")) == [("42", None, None), ("7", "b", "x")]
        assert statement.fetch(conn, (1, "a", None)) == [("2", "a", None), ("7", None, "x")]


def test_a_value_is_the_answers_first_and_none_without_a_row_or_for_null(postgres_url):
    statement = PreparedStatement("SELECT %s::text, 'second' FROM generate_series(1, %s::int)")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert statement.fetch_value(conn, ("first", 2)) == "first"
        assert statement.fetch_value(conn, ("first", 0)) is None  # no row
        assert statement.fetch_value(conn, (None, 1)) is None  # NULL
        statement.send(conn, ("sent", 1))  # the answer read later, as the journal does
        assert statement.value(conn) == "sent"
        with pytest.raises(psycopg.errors.DivisionByZero):
            PreparedStatement("SELECT 1 / %s::int").fetch_value(conn, (0,))
        assert statement.fetch_value(conn, ("after", 1)) == "after"


def test_an_error_is_psycopgs_own_and_leaves_the_connection_usable(postgres_url):
    table = f"t_{uuid.uuid4().hex[:8]}"
    insert = PreparedStatement(f"INSERT INTO {table} (k) VALUES (%s) RETURNING k")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (k TEXT UNIQUE)")
        assert insert.fetch(conn, ("a",)) == [("a",)]
        with pytest.raises(psycopg.errors.UniqueViolation):
            insert.fetch(conn, ("a",))
        # idle again: psycopg's own calls and the statement both go on
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (1,)
        assert insert.fetch(conn, ("b",)) == [("b",)]
    with psycopg.connect(postgres_url, autocommit=True) as other:  # prepared again there
        assert insert.fetch(other, ("c",)) == [("c",)]


def test_a_session_the_server_ended_is_an_operational_error(postgres_url):
    statement = PreparedStatement("SELECT %s::text")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert statement.fetch(conn, ("x",)) == [("x",)]
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        with pytest.raises(psycopg.OperationalError):
            statement.fetch(conn, ("y",))


def test_a_step_result_is_written_with_the_runs_status_and_survives_a_lost_session(
    postgres_url, status_schema
):
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(
            f"INSERT INTO {status_schema}.workflow_status VALUES (%s, 'PENDING')", (run_id,)
        )
        journal = Journal(postgres_url, dbos_schema=status_schema)
        try:
            journal.add_attempt(run_id, "one", 1, {"status": "success"})
            assert journal.add_result(run_id, "one", {"step_name": "one"})() == "PENDING"
            admin.execute(
                f"UPDATE {status_schema}.workflow_status SET status = 'CANCELLED'"
                " WHERE workflow_uuid = %s",
                (run_id,),
            )
            # the server ends the journal's session: the next result connects again
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'workrail-journal' AND datname = current_database()"
            )
            assert journal.add_result(run_id, "two", {"step_name": "two"})() == "CANCELLED"
            assert journal.add_result(run_id, "three", {"step_name": "three"})() == "CANCELLED"
            recorded = journal.recorded(run_id)
            assert recorded.attempts == {("one", 1): {"status": "success"}}
            assert recorded.keys == {"one", "two", "three"}
            assert journal.results(run_id) == [
                {"step_name": "one"},
                {"step_name": "two"},
                {"step_name": "three"},
            ]
        finally:
            journal.close()


# --- a result sent, its answer read later (`Journal.add_result`) ---------------------------------


def _results_seen_elsewhere(url: str, run_id: str) -> list[str]:
    with psycopg.connect(url, autocommit=True) as other:
        rows = other.execute(
            "SELECT step_key FROM workrail.journal WHERE run_id = %s AND result IS NOT NULL"
            " ORDER BY position",
            (run_id,),
        ).fetchall()
    return [key for (key,) in rows]


@pytest.fixture
def journal_and_run(postgres_url, status_schema):
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(
            f"INSERT INTO {status_schema}.workflow_status VALUES (%s, 'PENDING')", (run_id,)
        )
    journal = Journal(postgres_url, dbos_schema=status_schema)
    yield journal, run_id
    journal.close()


def test_a_result_is_durable_once_flushed_before_its_status_is_read(postgres_url, journal_and_run):
    journal, run_id = journal_and_run
    status = journal.add_result(run_id, "one", {"step_name": "one"})
    journal.flush()  # what the run does before a pause, a wait or its end
    assert _results_seen_elsewhere(postgres_url, run_id) == ["one"]
    assert status() == "PENDING"


def test_another_threads_use_of_the_connection_reads_the_answer_for_the_run(journal_and_run):
    journal, run_id = journal_and_run
    status = journal.add_result(run_id, "one", {"step_name": "one"})
    # the cancel watch's poll, from its own thread, comes first
    seen: list[object] = []
    watcher = threading.Thread(target=lambda: seen.append(journal.statuses([run_id])))
    watcher.start()
    watcher.join(30)
    assert seen == [{run_id: "PENDING"}]
    assert status() == "PENDING"
    assert journal.add_result(run_id, "two", {"step_name": "two"})() == "PENDING"
    assert journal.results(run_id) == [{"step_name": "one"}, {"step_name": "two"}]


def test_a_session_lost_before_the_answer_writes_the_result_again(
    postgres_url, journal_and_run, caplog
):
    journal, run_id = journal_and_run
    journal.add_attempt(run_id, "one", 1, {"status": "success"})
    journal.add_result(run_id, "warm", {"step_name": "warm"})()  # the table and statement exist
    with psycopg.connect(postgres_url) as blocker, psycopg.connect(postgres_url) as admin:
        # the server holds the write until its session is gone: no answer can come back
        blocker.execute("LOCK TABLE workrail.journal IN SHARE ROW EXCLUSIVE MODE")
        status = journal.add_result(run_id, "one", {"step_name": "one"})
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'workrail-journal' AND datname = current_database()"
        )
        blocker.commit()
    assert status() == "PENDING"  # written again on a new session
    assert "the run store's connection was lost" in caplog.text
    assert _results_seen_elsewhere(postgres_url, run_id) == ["warm", "one"]
    assert journal.recorded(run_id).attempts == {("one", 1): {"status": "success"}}


def test_closing_the_journal_waits_for_the_last_result(postgres_url, journal_and_run):
    journal, run_id = journal_and_run
    journal.add_result(run_id, "last", {"step_name": "last"})
    journal.close()
    assert _results_seen_elsewhere(postgres_url, run_id) == ["last"]


# --- cancels announced by the status table (`Journal.hear_cancels`) -----------------------------


def _set_status(url: str, schema: str, run_id: str, status: str | None) -> None:
    with psycopg.connect(url, autocommit=True) as other:
        if status is None:
            other.execute(
                f"DELETE FROM {schema}.workflow_status WHERE workflow_uuid = %s", (run_id,)
            )
        else:
            other.execute(
                f"UPDATE {schema}.workflow_status SET status = %s WHERE workflow_uuid = %s",
                (status, run_id),
            )


def test_a_hearing_journal_reads_a_runs_status_once_then_hears_its_cancel(
    postgres_url, status_schema, journal_and_run
):
    journal, run_id = journal_and_run
    journal.hear_cancels()
    journal.hear_cancels()  # again (another process's launch): the trigger is not added twice
    with psycopg.connect(postgres_url, autocommit=True) as other:
        triggers = other.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
            (f"{status_schema}.workflow_status",),
        ).fetchone()
    assert triggers == (1,)
    assert journal.add_result(run_id, "one", {"step_name": "one"})() == "PENDING"  # read
    # Not read again: a status row gone reads as the run executing here (a read would say None)
    _set_status(postgres_url, status_schema, run_id, None)
    assert journal.add_result(run_id, "two", {"step_name": "two"})() == "PENDING"
    with psycopg.connect(postgres_url, autocommit=True) as other:
        other.execute(
            f"INSERT INTO {status_schema}.workflow_status VALUES (%s, 'PENDING')", (run_id,)
        )
    # A cancel by anyone (here a plain UPDATE, as DBOS's own) is announced with its commit
    _set_status(postgres_url, status_schema, run_id, "CANCELLED")
    assert journal.add_result(run_id, "three", {"step_name": "three"})() == "CANCELLED"
    # and a cancel taken back (a workflow resumed by DBOS's tools) too
    _set_status(postgres_url, status_schema, run_id, "PENDING")
    assert journal.add_result(run_id, "four", {"step_name": "four"})() == "PENDING"
    assert journal.results(run_id) == [
        {"step_name": "one"},
        {"step_name": "two"},
        {"step_name": "three"},
        {"step_name": "four"},
    ]


def test_a_cancel_made_while_the_journal_was_not_connected_is_read_after_it_connects(
    postgres_url, status_schema, journal_and_run
):
    journal, run_id = journal_and_run
    journal.hear_cancels()
    assert journal.add_result(run_id, "one", {"step_name": "one"})() == "PENDING"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'workrail-journal' AND datname = current_database()"
        )
    # announced to nobody: the journal's session is gone
    _set_status(postgres_url, status_schema, run_id, "CANCELLED")
    assert journal.add_result(run_id, "two", {"step_name": "two"})() == "CANCELLED"
    # and heard again on the new session
    other_run = f"run-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(
            f"INSERT INTO {status_schema}.workflow_status VALUES (%s, 'PENDING')", (other_run,)
        )
    assert journal.add_result(other_run, "one", {"step_name": "one"})() == "PENDING"
    _set_status(postgres_url, status_schema, other_run, "CANCELLED")
    assert journal.add_result(other_run, "two", {"step_name": "two"})() == "CANCELLED"
