"""Forks of sessions in the run store, on SQLite and Postgres: a branch made once by its first
passing answer, with its parent's earlier answers; the lineage both ways; a store made before
forks upgraded in place."""

from __future__ import annotations

import sqlite3

import pytest

from tests.engine.sessions.test_sessions import CHECKED
from workrail_engine.answers.record import AnswerNotApplied
from workrail_engine.sessions import SessionService
from workrail_engine.sessions.store import SESSION_TABLES


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    if request.param == "postgres":
        made = SessionService(database=request.getfixturevalue("postgres_url"))
    else:
        made = SessionService(home=tmp_path / "runs")
    yield made
    made.close()


def test_a_fork_is_made_once_by_its_first_passing_answer_and_keeps_the_earlier_answers(service):
    started = service.start(CHECKED, goal="fork it", workspace="/work/repo")
    quiet = service.continue_session(started.continue_token, notes="PLAN: first")
    last = service.continue_session(quiet.continue_token, notes="quiet one")
    assert last.pending is not None and last.pending["stepId"] == "last"

    offered = service.continue_session(quiet.continue_token)  # the quiet step, passed since
    assert offered.pending is not None and offered.pending["stepId"] == "quiet"
    assert offered.fork_of is not None and offered.fork_of["stepAttempt"] == 2
    assert [r["stepId"] for r in offered.recovery or []] == ["plan"]

    branch = service.continue_session(offered.continue_token, notes="quiet two")
    assert branch.forked_from == {"runId": started.run_id, "stepId": "quiet", "stepAttempt": 2}
    assert service.continue_session(offered.continue_token, notes="quiet two").outcome == "replayed"
    with pytest.raises(AnswerNotApplied):
        service.continue_session(offered.continue_token, notes="quiet three")

    # the plan step forked with an answer that fails its check: no branch yet, the same token
    # retries and makes it
    at_plan = service.continue_session(started.continue_token)
    blocked = service.continue_session(at_plan.continue_token, notes="no plan")
    assert blocked.outcome == "blocked" and blocked.continue_token == at_plan.continue_token
    assert [f["run_id"] for f in service.get(started.run_id)["session"]["forks"]] == [branch.run_id]
    planned = service.continue_session(at_plan.continue_token, notes="PLAN: second")
    assert planned.run_id not in (started.run_id, branch.run_id)

    # a fork of the fork at its last step: the plan answer is the parent's, the quiet one its own
    again = service.continue_session(branch.continue_token, notes="done")
    assert again.status == "success"
    offered_again = service.continue_session(branch.continue_token)
    assert offered_again.pending is not None and offered_again.pending["stepId"] == "last"
    grandchild = service.continue_session(offered_again.continue_token, notes="quiet four")
    assert grandchild.status == "success"

    parent = service.get(started.run_id)
    assert [f["run_id"] for f in parent["session"]["forks"]] == [branch.run_id, planned.run_id]
    assert [(r["step_name"], r["notes"]) for r in parent["step_results"]] == [
        ("plan", "PLAN: first"),
        ("quiet", "quiet one"),
    ]
    middle = service.get(branch.run_id)
    assert middle["session"]["forked_from"] == {
        "run_id": started.run_id,
        "step_id": "quiet",
        "step_attempt": 2,
    }
    assert [f["run_id"] for f in middle["session"]["forks"]] == [grandchild.run_id]
    assert [
        (r["step_name"], r["notes"]) for r in service.get(grandchild.run_id)["step_results"]
    ] == [
        ("plan", "PLAN: first"),
        ("quiet", "quiet two"),
        ("last", "quiet four"),
    ]


def test_a_store_made_before_forks_is_upgraded_in_place(tmp_path):
    """A store whose sessions kept no positions (its fork tables dropped, as a store made before
    them): opened, it gains them; a step left before cannot be forked (its token re-reads the
    pending step, as before), a step left after can."""
    old = SessionService(home=tmp_path / "runs")
    started = old.start(CHECKED, goal="old store", workspace="/work/repo")
    quiet = old.continue_session(started.continue_token, notes="PLAN: before")
    old.close()
    with sqlite3.connect(tmp_path / "runs" / "runs.sqlite") as database:
        for role in ("steps", "forks"):
            database.execute(f"DROP TABLE {SESSION_TABLES[role][0]}")

    upgraded = SessionService(home=tmp_path / "runs")
    try:
        before = upgraded.continue_session(started.continue_token)
        assert before.pending is not None and before.pending["stepId"] == "quiet"
        assert before.fork_of is None and before.continue_token == quiet.continue_token
        upgraded.continue_session(quiet.continue_token, notes="after the upgrade")
        offered = upgraded.continue_session(quiet.continue_token)
        assert offered.fork_of is not None and offered.fork_of["stepId"] == "quiet"
        branch = upgraded.continue_session(offered.continue_token, notes="a branch")
        assert branch.forked_from is not None
        assert upgraded.get(started.run_id)["session"]["forks"][0]["run_id"] == branch.run_id
    finally:
        upgraded.close()
