"""The one mapping from DBOS's status to a run's: its SQL (what the history filters and counts by)
gives what its Python gives (what `RunService` reports), for every DBOS status, on SQLite and on
Postgres."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from dbos._sys_db import WorkflowStatusString

from workrail_engine.runs.run_results import ACTIVE, TERMINAL
from workrail_engine.runs.run_status import DBOS_STATUSES, IN_FLIGHT, run_status, status_sql

# What a run may have reported of itself: nothing, each of our statuses, something unknown.
REPORTED = [None, *ACTIVE, *TERMINAL, "bogus"]
# Every DBOS status, and one a later DBOS may add.
CASES = [(dbos, reported) for dbos in (*DBOS_STATUSES, "SOMETHING_NEW") for reported in REPORTED]


def test_every_dbos_status_is_mapped():
    assert set(DBOS_STATUSES) == {status.value for status in WorkflowStatusString}


def test_a_run_in_flight_reads_as_what_it_reported_or_running():
    assert set(IN_FLIGHT) == {"PENDING", "ENQUEUED", "DELAYED"}
    for dbos in IN_FLIGHT:
        assert run_status(dbos, None) == run_status(dbos, "bogus") == "running"
        assert run_status(dbos, "waiting") == "waiting"
    assert run_status("CANCELLED", "running") == "cancelled"
    assert run_status("SUCCESS", "partial") == "partial"
    assert run_status("SUCCESS", None) == "failed"


def test_the_sql_agrees_with_the_python_on_sqlite():
    conn = sqlite3.connect(":memory:")
    sql = f"SELECT {status_sql('s', 'r')} FROM (SELECT ? AS s, ? AS r)"
    found = [conn.execute(sql, case).fetchone()[0] for case in CASES]
    assert found == [run_status(*case) for case in CASES]


@pytest.mark.slow
def test_the_sql_agrees_with_the_python_on_postgres(postgres_url):
    sql = f"SELECT {status_sql('s', 'r')} FROM (SELECT %s::text AS s, %s::text AS r) AS t"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        found = [conn.execute(sql, case).fetchone()[0] for case in CASES]  # type: ignore[union-attr]
    assert found == [run_status(*case) for case in CASES]
