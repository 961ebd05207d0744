"""`workrail fork RUN --from STEP` as a user types it, on SQLite and on a real PostgreSQL server.

Every step of the forked workflow appends a line to a log file, so the file tells which commands
ran again (none of those before the fork point) and with which values (the changed parameter and
context from the fork point on)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.test_no_run_left_behind import LIVENESS, _until
from tests.cli.test_runs_cli import workrail
from tests.engine.runs.runs_support import fork_flow, fork_log_line
from workrail_engine.runs.journal import CRASH_IN_FORK_COPY

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The run store the `workrail` processes share: SQLite under WORKRAIL_HOME, or Postgres."""
    if request.param == "postgres":
        monkeypatch.setenv("WORKRAIL_DATABASE_URL", request.getfixturevalue("postgres_url"))
    return str(request.param)


def _json(done) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def _parent_run(tmp_path: Path) -> tuple[Path, Path, dict]:
    """The project, the log file and the finished run (`--format json`) of `fork_flow`."""
    project = tmp_path / "project"
    project.mkdir()
    log = tmp_path / "log"
    flow = project / "fork-flow.json"
    flow.write_text(json.dumps(fork_flow(log)))
    return project, log, _json(workrail(project, tmp_path, "run", str(flow), "--format", "json"))


def test_fork_from_a_parallel_member_in_a_loop_then_a_fork_of_the_fork(store, tmp_path):
    project, log, parent = _parent_run(tmp_path)
    keys = [r["step_name"] for r in parent["step_results"]]
    assert parent["status"] == "success" and "right[2]" in keys, keys
    log.write_text("")

    fork = _json(
        workrail(
            project, tmp_path, "fork", parent["workflow_id"], "--from", "right[2]",
            "--param", "tag=b", "--context", "note=yes", "--format", "json",
        )
    )  # fmt: skip
    at = keys.index("right[2]")
    assert fork["status"] == "success"
    assert fork["forked_from"] == {"run_id": parent["workflow_id"], "step": "right[2]"}
    # the results recorded before right[2] are kept as they were; nothing of them ran again
    assert fork["step_results"][:at] == parent["step_results"][:at]
    again = [k for k in keys[at:] if k not in ("last", "noted")]
    assert sorted(log.read_text().splitlines()) == sorted(
        [*(fork_log_line(k) for k in again), "last b", "noted"]
    )

    log.write_text("")
    second = _json(
        workrail(
            project, tmp_path, "fork", fork["workflow_id"], "--from", "last",
            "--param", "tag=c", "--format", "json",
        )
    )  # fmt: skip
    # the first fork's context change (at right[2], inside what this one keeps) still holds
    assert log.read_text().splitlines() == ["last c", "noted"]
    assert second["forked_from"] == {"run_id": fork["workflow_id"], "step": "last"}

    shown = workrail(project, tmp_path, "run-status", fork["workflow_id"])
    assert shown.returncode == 0, shown.stderr
    assert f"forked from {parent['workflow_id']} at right[2]" in shown.stdout
    assert f"forks: {second['workflow_id']} at last" in shown.stdout
    listed = workrail(project, tmp_path, "runs", "--format", "json")
    by_id = {r["workflow_id"]: r for r in json.loads(listed.stdout)}
    assert by_id[parent["workflow_id"]]["forks"] == [
        {"run_id": fork["workflow_id"], "step": "right[2]"}
    ]
    assert by_id[second["workflow_id"]]["forked_from"]["run_id"] == fork["workflow_id"]


def test_an_unknown_run_or_step_is_a_usage_error_naming_the_steps(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    flow = project / "fork-flow.json"
    flow.write_text(json.dumps(fork_flow(tmp_path / "log")))
    parent = _json(workrail(project, tmp_path, "run", str(flow), "--format", "json"))
    unknown_step = workrail(project, tmp_path, "fork", parent["workflow_id"], "--from", "lats")
    assert unknown_step.returncode == 2, unknown_step.stderr
    assert "no step 'lats' to fork from" in unknown_step.stderr
    listed = unknown_step.stderr.split("its steps, in the order they ran: ", 1)[1]
    assert [k.strip() for k in " ".join(listed.split()).split(",")] == [
        r["step_name"] for r in parent["step_results"]
    ]
    unknown_run = workrail(project, tmp_path, "fork", "wf-000000000000", "--from", "last")
    assert unknown_run.returncode == 2, unknown_run.stderr
    assert "wf-000000000000" in unknown_run.stderr
    assert "started" not in unknown_step.stderr + unknown_run.stderr


def test_a_group_or_loop_id_forks_from_the_first_of_its_steps_that_ran(tmp_path):
    """``--from each`` (a loop) and ``--from pair[2]`` (a parallel group, in iteration 2) fork
    from the first of their steps that ran, and say which; all of it runs again."""
    project, log, parent = _parent_run(tmp_path)
    keys = [r["step_name"] for r in parent["step_results"]]
    for named, first in (
        ("each", keys[1]),  # the loop's first step to end: a member of iteration 1
        ("pair[2]", next(k for k in keys if k.endswith("[2]"))),
    ):
        log.write_text("")
        done = workrail(
            project, tmp_path, "fork", parent["workflow_id"], "--from", named, "--format", "json"
        )
        fork = _json(done)
        assert fork["forked_from"]["step"] == first, (named, keys)
        assert f"at {first} (the first step of {named!r} that ran)" in done.stderr
        again = keys[keys.index(first) :]
        ran = [fork_log_line(k) if "[" in k else f"{k} a" for k in again if k != "noted"]
        assert sorted(log.read_text().splitlines()) == sorted(ran), named


def _forks_in_store(tmp_path: Path, parent: str) -> dict[str, tuple[int, int | None]]:
    """Every other run of the store: its journal rows and the rows its fork record says were
    copied (None: no fork recorded)."""
    with sqlite3.connect(tmp_path / "home" / "runs" / "runs.sqlite") as conn:
        runs = [
            r[0]
            for r in conn.execute(
                "SELECT workflow_uuid FROM workflow_status WHERE workflow_uuid != ?", (parent,)
            )
        ]
        found = {}
        for run in runs:
            rows = conn.execute("SELECT COUNT(*) FROM workrail_journal WHERE run_id = ?", (run,))
            copied = conn.execute("SELECT rows_copied FROM workrail_forks WHERE run_id = ?", (run,))
            recorded = copied.fetchone()
            found[run] = (rows.fetchone()[0], recorded[0] if recorded else None)
    return found


def _run_status_in_store(tmp_path: Path, run_id: str) -> str:
    """DBOS's status of the run (PENDING while it executes)."""
    with sqlite3.connect(tmp_path / "home" / "runs" / "runs.sqlite") as conn:
        return conn.execute(
            "SELECT status FROM workflow_status WHERE workflow_uuid = ?", (run_id,)
        ).fetchone()[0]


def test_a_fork_killed_in_the_middle_of_its_copy_leaves_no_half_copy(tmp_path, monkeypatch):
    """The `workrail fork` process ends (as a kill -9 would) with the kept rows copied and the
    fork not yet recorded: the store holds none of the copy; the run left in flight is taken up
    by the next process and copies whole, once; and the fork can be made again."""
    project, log, parent = _parent_run(tmp_path)
    run_id, keys = parent["workflow_id"], [r["step_name"] for r in parent["step_results"]]
    kept = keys.index("last")
    monkeypatch.setenv(CRASH_IN_FORK_COPY, "1")
    crashed = workrail(project, tmp_path, "fork", run_id, "--from", "last")
    monkeypatch.delenv(CRASH_IN_FORK_COPY)
    assert crashed.returncode == 70, crashed.stdout + crashed.stderr
    left = _forks_in_store(tmp_path, run_id)
    assert len(left) == 1 and list(left.values()) == [(0, None)], left  # nothing half-written

    again = _json(workrail(project, tmp_path, "fork", run_id, "--from", "last", "--format", "json"))
    assert again["step_results"][:kept] == parent["step_results"][:kept]
    assert again["forked_from"] == {"run_id": run_id, "step": "last"}
    # the run the crash left in flight is taken up once a later process looks at it (docs/runs.md,
    # "No run left behind"): it copies whole, once, as the fork made again did
    (crashed_fork,) = left
    assert workrail(project, tmp_path, "run-status", crashed_fork).returncode == 0
    taken_up = _until(
        lambda: _forks_in_store(tmp_path, run_id)[crashed_fork][1] is not None,
        LIVENESS + 10,
        "the crashed fork is taken up",
    )
    assert taken_up
    # its copy recorded, it goes on to run its last step: compared once it has ended
    _until(
        lambda: _run_status_in_store(tmp_path, crashed_fork) not in ("PENDING", "ENQUEUED"),
        LIVENESS + 10,
        "the crashed fork ends",
    )
    forks = _forks_in_store(tmp_path, run_id)
    assert forks[crashed_fork] == forks[again["workflow_id"]], forks
    done = _json(workrail(project, tmp_path, "run-status", crashed_fork, "--format", "json"))
    assert done["step_results"][:kept] == parent["step_results"][:kept]
