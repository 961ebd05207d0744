"""`RunHistory`: the store's runs as the dashboard reads them, without DBOS, agreeing with
`RunService` on statuses and counts."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.engine.runs.runs_support import command, py, workflow
from workrail_engine.runs import RunOptions
from workrail_engine.runs.history import OUTPUT_CAP, RunHistory


@pytest.fixture(scope="module")
def history(service, run_home):
    reader = RunHistory(home=run_home)
    yield reader
    reader.close()


def _finish(service, run_id: str) -> dict:
    return service.wait(run_id, 60)


def test_a_run_in_detail_matches_the_service(service, history):
    wf = workflow(
        command("first", py("print('<b>hi</b>')")),
        command("never", ["true"], runCondition={"var": "parameters.go", "equals": True}),
        {
            "id": "both",
            "title": "both",
            "type": "parallel",
            "steps": [
                command("slow", ["sleep", "0.2"]),
                command(
                    "flaky",
                    py("import sys; sys.stderr.write('x' * 40000); sys.exit(1)"),
                    retry={"maxAttempts": 2, "delaySeconds": 0.05},
                    onFailure="continue",
                ),
            ],
        },
        id="history-detail",
    )
    run_id = service.run(wf, {"go": False}, RunOptions())
    snap = _finish(service, run_id)
    view = history.run(run_id)
    assert view["status"] == snap["status"] == "partial"
    assert view["steps_done"] == snap["steps_completed"]
    assert view["steps_total"] == snap["steps_total"]
    steps = {s["key"]: s for s in view["steps"]}
    assert steps["first"]["stdout"] == "<b>hi</b>\n"
    assert steps["never"]["status"] == "skipped"
    assert steps["never"]["condition"] == "parameters.go is true"
    assert [a["status"] for a in steps["flaky"]["attempts"]] == ["failed", "failed"]
    assert steps["flaky"]["stderr"] and len(steps["flaky"]["stderr"]) <= OUTPUT_CAP
    assert steps["slow"]["group"] == steps["flaky"]["group"] == "both"
    slow = steps["slow"]["attempts"][0]
    assert slow["end"] - slow["start"] == pytest.approx(0.2, abs=0.15)
    assert view["started_at"] <= slow["start"] <= slow["end"] <= view["ended_at"] + 0.01


def test_a_page_is_newest_first_filtered_and_counted(service, history):
    ids = []
    for _ in range(3):
        ids.append(
            service.run(workflow(command("one", ["true"]), id="history-page"), {}, RunOptions())
        )
        time.sleep(0.002)  # distinct creation times (milliseconds)
    failing = service.run(
        workflow(command("bad", ["false"]), id="history-page-bad"), {}, RunOptions()
    )
    for run_id in [*ids, failing]:
        _finish(service, run_id)
    page = history.page(workflow="history-page")
    assert [row.run_id for row in page.rows] == ids[::-1]
    assert page.total == 3
    looped = workflow(
        {
            "id": "again",
            "type": "loop",
            "loop": {"type": "for", "count": 3},
            "body": [command("tick", ["true"])],
        },
        id="history-loop",
    )
    snap = _finish(service, service.run(looped, {}, RunOptions()))
    view = history.run(snap["workflow_id"])
    assert (
        (view["steps_done"], view["steps_total"])
        == (snap["steps_completed"], snap["steps_total"])
        == (1, 1)
    )
    assert [s["key"] for s in view["steps"]] == ["tick[1]", "tick[2]", "tick[3]"]
    (row,) = history.page(workflow="history-loop").rows
    assert (row.steps_done, row.steps_total) == (1, 1)
    assert [(r.status, r.steps_done, r.steps_total) for r in page.rows] == [("success", 1, 1)] * 3
    failed = history.page(status="failed", workflow="history-page-bad")
    assert [row.run_id for row in failed.rows] == [failing]
    second = history.page(workflow="history-page", offset=1, limit=1)
    assert [row.run_id for row in second.rows] == [ids[1]] and second.total == 3
    assert "history-page" in history.workflow_ids()


def test_waiting_and_cancelled_runs(service, history):
    asks = workflow({"id": "ask", "title": "Ask", "prompt": "Say something"}, id="history-wait")
    run_id = service.run(asks, {}, RunOptions())
    service.wait(run_id, 30)
    view = history.run(run_id)
    assert view["status"] == "waiting"
    waiting = next(s for s in view["steps"] if s["key"] == "ask")
    # The guidance is the one the stateless next step gives: the step named, then its prompt.
    assert waiting["status"] == "waiting"
    assert waiting["guidance"]["prompt"].splitlines()[0] == "Step: Ask (ask)"
    assert waiting["guidance"]["prompt"].endswith("Say something")
    version = history.version(run_id)
    service.continue_run(run_id, "something")
    assert history.version(run_id) != version
    assert history.run(run_id)["status"] == "success"

    sleeper = service.run(
        workflow(command("nap", ["sleep", "30"]), id="history-cancel"), {}, RunOptions()
    )
    service.cancel(sleeper, "enough")
    deadline = time.monotonic() + 10
    while sleeper in service.runtime.progress.live and time.monotonic() < deadline:
        time.sleep(0.05)  # its thread ends before the store closes at teardown
    view = history.run(sleeper)
    assert view["status"] == "cancelled" and "enough" in view["error_message"]
    assert history.page(status="cancelled", workflow="history-cancel").rows[0].run_id == sleeper


def test_a_new_fork_changes_the_parents_version(service, history):
    """A finished run's page lists its forks: a fork of it must make a poll of it redraw."""
    wf = workflow(command("one", py("print(1)")), command("two", py("print(2)")), id="forked")
    parent = service.run(wf, {}, RunOptions())
    service.wait(parent, 30)
    version = history.version(parent)
    service.wait(service.fork(parent, "two"), 30)
    assert history.version(parent) != version
    assert [f["step"] for f in history.run(parent)["forks"]] == ["two"]


def test_a_store_that_does_not_exist_has_no_runs(tmp_path):
    empty = RunHistory(home=tmp_path / "nothing-here")
    assert empty.page().rows == [] and empty.page().total == 0
    assert empty.run("wf-123") is None
    assert not (tmp_path / "nothing-here").exists()


RUN_ON = """
import json, sys
from pathlib import Path
from workrail_engine.runs import RunOptions, RunService
service = RunService(Path(sys.argv[1]), allow_commands=True, home=Path(sys.argv[2]), database=sys.argv[3])
service.start()
run_id = service.run(json.loads(sys.argv[4]), {}, RunOptions())
snap = service.wait(run_id, 60)
print(json.dumps(snap))
service.close()
"""


@pytest.mark.slow
def test_a_postgres_store_reads_the_same(postgres_url, tmp_path):
    """Another process runs on Postgres; the reader here sees it through its own connection."""
    wf = workflow(
        command("first", ["echo", "on postgres"]),
        command("never", ["true"], runCondition={"var": "parameters.go", "equals": True}),
        command("bad", ["false"], onFailure="continue"),
        id="pg-history",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUN_ON,
            str(tmp_path),
            str(tmp_path / "home"),
            postgres_url,
            json.dumps(wf),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    snap = json.loads(done.stdout.strip().splitlines()[-1])
    reader = RunHistory(url=postgres_url)
    try:
        (row,) = reader.page(workflow="pg-history").rows
        assert row.run_id == snap["workflow_id"] and row.status == snap["status"] == "partial"
        assert (row.steps_done, row.steps_total) == (snap["steps_completed"], snap["steps_total"])
        assert reader.page(status="partial").total == 1 and reader.page(status="success").total == 0
        view = reader.run(row.run_id)
        steps = {s["key"]: s for s in view["steps"]}
        assert steps["first"]["stdout"] == "on postgres\n"
        assert steps["never"]["status"] == "skipped" and steps["bad"]["status"] == "failed"
        assert reader.workflow_ids() == ["pg-history"]
    finally:
        reader.close()


def test_sessions_are_listed_with_each_steps_notes(service, history):
    definition = {
        "id": "noted-session",
        "name": "Noted session",
        "steps": [
            {"id": "look", "title": "Look around", "prompt": "Look"},
            {"id": "write", "title": "Write it up", "prompt": "Write"},
        ],
    }
    sessions = service.sessions
    step = sessions.start(definition, goal="find the slow query")
    sessions.continue_session(step.continue_token, notes="the slow query is in reports.py")
    page = history.page(limit=200)
    row = next(r for r in page.rows if r.run_id == step.run_id)
    assert (row.workflow_id, row.status, row.steps_done, row.steps_total) == (
        "noted-session",
        "waiting",
        1,
        2,
    )
    assert history.page(workflow="noted-session").total == 1
    view = history.run(step.run_id)
    assert [(s["step_id"], s["status"]) for s in view["steps"]] == [
        ("look", "success"),
        ("write", "waiting"),
    ]
    assert view["steps"][0]["notes"] == "the slow query is in reports.py"
    assert view["session"]["goal"] == "find the slow query"
    before = history.version(step.run_id)
    sessions.cancel(step.run_id)
    assert history.version(step.run_id) != before
    assert history.run(step.run_id)["status"] == "cancelled"


def test_the_stores_name_maps_share_no_name():
    """The history formats its queries with the journal's, the sessions' and the answers' table
    names in one mapping: a key two of them used would silently point one's queries at the
    other's table (the sessions' and the runs' fork tables once did)."""
    from workrail_engine.answers.store import ANSWER_NAMES
    from workrail_engine.runs.journal import JOURNAL_TABLES
    from workrail_engine.sessions.store import SESSION_TABLES

    maps = (JOURNAL_TABLES, SESSION_TABLES, ANSWER_NAMES)
    keys = [key for names in maps for key in names]
    assert len(keys) == len(set(keys))
