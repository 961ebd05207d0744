"""Sessions on the run store: the same walk as the stateless navigator, checks on advance,
exactly-once answers (also between two processes, on SQLite and Postgres), tokens, resume."""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.context_answers import context_asked
from workrail_engine.answers.record import AnswerNotApplied
from workrail_engine.catalog import Catalog, default_sources
from workrail_engine.errors import RunNotFound
from workrail_engine.serving.navigator import next_step
from workrail_engine.sessions import (
    SessionService,
    SessionTokenError,
    workflow_hash,
)

ROOT = Path(__file__).parents[3]
UPSTREAM_NAV = ROOT / "tests" / "fixtures" / "upstream_nav"
WALKED = sorted(p.stem for p in (ROOT / "workflows").glob("*.json")) + sorted(
    json.loads(p.read_text())["id"] for p in UPSTREAM_NAV.glob("*.json")
)

CHECKED = {
    "id": "checked-flow",
    "name": "Checked",
    "description": "Steps with checks",
    "version": "1.0.0",
    "secrets": ["SESSION_TEST_TOKEN"],
    "steps": [
        {
            "id": "plan",
            "title": "Plan",
            "prompt": "Plan {{goal}}",
            "validationCriteria": [
                {"type": "contains", "value": "PLAN", "message": "Start with PLAN"}
            ],
        },
        {"id": "quiet", "title": "Quiet", "prompt": "Nothing to say", "notesOptional": True},
        {"id": "last", "title": "Last", "prompt": "Wrap up"},
    ],
}


@pytest.fixture
def sessions(tmp_path):
    service = SessionService(home=tmp_path / "runs")
    yield service
    service.close()


def _walkable(workflow: dict) -> dict:
    """The workflow without its output checks (criteria, contracts, assessments): the walk
    below compares step order and prompts, and answers carry no crafted outputs."""
    out = copy.deepcopy(workflow)

    def strip(steps):
        for step in steps:
            if not isinstance(step, dict):
                continue
            for key in ("validationCriteria", "outputContract", "assessmentRefs"):
                step.pop(key, None)
            strip(step.get("steps") or [])
            if isinstance(step.get("body"), list):
                strip(step["body"])

    strip(out["steps"])
    return out


@pytest.mark.parametrize("workflow_id", WALKED)
def test_a_session_walks_the_same_steps_and_prompts_as_the_stateless_navigator(
    workflow_id, sessions, tmp_path
):
    catalog = Catalog(default_sources(tmp_path, extra_dirs=[UPSTREAM_NAV]))
    workflow = _walkable(catalog.served(workflow_id))
    loop_stop = [{"kind": "wr.loop_control", "decision": "stop"}]
    facts = {
        "reviewFiles": ["a.py", "b.py"],
        "passCount": 2,
        "files": ["a", "b"],
    }  # what loops read (mr-review, nav-loops)
    step = sessions.start(workflow, goal="walk it", context=facts)
    completed: list[str] = []
    context: dict = {**facts, "goal": "walk it"}
    outputs: dict = {}  # where the stateless agent puts its notes: nextAction.outputTo
    walked = 0
    while True:
        served = next_step(workflow, completed, {**context, "steps": outputs}, artifacts=loop_stop)
        stateless = served.to_dict()
        stateless["context"].pop("steps")  # a session keeps its steps' outputs to itself
        assert step.next == stateless  # step, prompt, guidance, context, loop position
        if stateless["isComplete"]:
            assert step.is_complete and step.pending is None
            break
        notes = f"done {stateless['step']['id']}"
        completed.append(stateless["step"]["id"])
        asked = context_asked(workflow, stateless["step"]["id"])  # the step's `sets`
        context = {**stateless["context"], **asked}
        for path in stateless["nextAction"].get("outputTo", []):
            outputs[path.split(".")[1]] = {"output": notes}
        step = sessions.continue_session(
            step.continue_token, notes=notes, artifacts=loop_stop, context=asked
        )
        assert step.outcome == "advanced"
        walked += 1
        assert walked < 200
    assert walked >= 1


def test_every_check_is_enforced_on_advance_and_a_failed_one_keeps_the_step(sessions):
    step = sessions.start(CHECKED, goal="caching")
    assert "Plan caching" in step.pending["prompt"]
    blocked = sessions.continue_session(step.continue_token, notes="")
    assert blocked.outcome == "blocked" and blocked.pending["stepId"] == "plan"
    assert [p["kind"] for p in blocked.problems] == ["notes", "criteria"]
    assert blocked.continue_token == step.continue_token  # the same token retries
    again = sessions.continue_session(step.continue_token, notes="no plan here")
    assert [p["message"] for p in again.problems] == ["Start with PLAN"]
    moved = sessions.continue_session(step.continue_token, notes="PLAN: cache it")
    assert moved.outcome == "advanced" and moved.pending["stepId"] == "quiet"
    quiet = sessions.continue_session(moved.continue_token, notes="", intent="advance")
    assert quiet.outcome == "advanced" and quiet.pending["stepId"] == "last"  # notesOptional
    done = sessions.continue_session(quiet.continue_token, notes="wrapped")
    assert done.is_complete and done.status == "success"
    snap = sessions.get(done.run_id)
    assert [r["step_name"] for r in snap["step_results"]] == ["plan", "quiet", "last"]
    assert snap["step_results"][0]["notes"] == "PLAN: cache it"
    assert snap["status"] == "success" and snap["steps_completed"] == 3


def test_an_answer_is_applied_once_replayed_with_its_response_and_another_refused(sessions):
    step = sessions.start(CHECKED, goal="g")
    first = sessions.continue_session(step.continue_token, notes="PLAN: a")
    replay = sessions.continue_session(step.continue_token, notes="PLAN: a")
    assert replay.outcome == "replayed"
    assert {**replay.to_dict(), "outcome": "advanced"} == first.to_dict()
    with pytest.raises(AnswerNotApplied) as refused:
        sessions.continue_session(step.continue_token, notes="PLAN: b")
    assert refused.value.data["reason"] == "ANSWER_NOT_APPLIED"
    assert refused.value.data["state"]["pending"]["stepId"] == "quiet"
    assert "waits on step 'quiet'" in refused.value.message
    # by run id + step attempt, as `workrail continue --step` and continue_workflow's step_key do
    assert sessions.answer(step.run_id, 1, notes="PLAN: a").outcome == "replayed"
    # without an attempt, resending the last applied answer is its replay, not a second advance
    assert sessions.answer(step.run_id, None, notes="PLAN: a").outcome == "replayed"
    assert sessions.rehydrate(step.run_id).attempt == 2
    assert len(sessions.get(step.run_id)["step_results"]) == 1


def test_tokens_are_signed_scoped_and_carry_no_secret(tmp_path, sessions, monkeypatch):
    monkeypatch.setenv("SESSION_TEST_TOKEN", "s3cr3t-v4lue-42")
    step = sessions.start(CHECKED, goal="use s3cr3t-v4lue-42 carefully")
    assert all(t[:3] in ("ct_", "ck_") for t in (step.continue_token, step.checkpoint_token))
    forged = step.continue_token[:-1] + ("A" if step.continue_token[-1] != "A" else "B")
    with pytest.raises(SessionTokenError) as bad:
        sessions.continue_session(forged, notes="PLAN")
    assert bad.value.data["reason"] == "TOKEN_BAD_SIGNATURE"
    other = SessionService(home=tmp_path / "other-store")
    with pytest.raises(SessionTokenError) as foreign:
        other.continue_session(step.continue_token, notes="PLAN")
    other.close()
    assert foreign.value.data["reason"] == "TOKEN_BAD_SIGNATURE"
    assert "another run store" in foreign.value.message
    with pytest.raises(SessionTokenError) as garbage:
        sessions.continue_session("hello", notes="PLAN")
    assert garbage.value.data["reason"] == "TOKEN_INVALID_FORMAT"
    resume = sessions.checkpoint(step.checkpoint_token)["resumeToken"]
    assert resume.startswith("st_")
    assert sessions.checkpoint(step.checkpoint_token)["resumeToken"] == resume  # idempotent
    with pytest.raises(SessionTokenError) as scope:
        sessions.continue_session(resume, notes="PLAN: x")
    assert scope.value.data["reason"] == "TOKEN_SCOPE_MISMATCH"
    sessions.continue_session(step.continue_token, notes="PLAN: s3cr3t-v4lue-42 used")
    database = tmp_path / "runs" / "runs.sqlite"
    assert oct(database.stat().st_mode & 0o777) == "0o600"
    conn = sqlite3.connect(database)
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for row in conn.execute(f'SELECT * FROM "{table}"'):
            assert "s3cr3t" not in json.dumps(row, default=str), table
    assert "s3cr3t" not in json.dumps(sessions.get(step.run_id))


def test_the_workflow_is_pinned_at_start(sessions):
    workflow = copy.deepcopy(CHECKED)
    step = sessions.start(workflow, goal="g")
    workflow["steps"][1]["prompt"] = "EDITED"
    moved = sessions.continue_session(step.continue_token, notes="PLAN: a")
    assert "Nothing to say" in moved.pending["prompt"] and "EDITED" not in moved.pending["prompt"]
    assert moved.workflow_hash == workflow_hash(CHECKED) != workflow_hash(workflow)
    assert sessions.get(step.run_id)["session"]["workflow_hash"] == moved.workflow_hash


def test_resume_finds_sessions_by_notes_goal_workflow_and_git_with_a_recovery_section(
    sessions, tmp_path
):
    repo = tmp_path / "repo"
    (repo / ".git" / "refs" / "heads").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature-x\n")
    (repo / ".git" / "refs" / "heads" / "feature-x").write_text("a" * 40 + "\n")
    target = sessions.start(CHECKED, goal="speed up the importer", workspace=str(repo))
    sessions.continue_session(target.continue_token, notes="PLAN: memoize the tokenizer")
    for n in range(7):
        sessions.start(CHECKED, goal=f"unrelated chore {n}", workspace=str(tmp_path))
    found = sessions.resume(workspace=str(repo), query="tokenizer memoize")
    assert found["candidates"][0]["runId"] == target.run_id
    first = found["candidates"][0]
    assert first["pendingStepId"] == "quiet" and "memoize" in first["lastNotes"]
    assert {"matched_notes", "matched_branch", "matched_head_sha"} <= set(first["whyMatched"])
    assert first["gitBranch"] == "feature-x" and first["workflowId"] == "checked-flow"
    assert len(sessions.resume(workspace=str(tmp_path), query="chore")["candidates"]) == 5
    resumed = sessions.continue_session(first["resumeToken"], workspace=str(repo))
    assert resumed.outcome == "current" and resumed.pending["stepId"] == "quiet"
    assert "## Recovery" in resumed.pending["prompt"]
    assert "memoize the tokenizer" in resumed.pending["prompt"]
    assert resumed.continue_token.startswith("ct_")  # re-read: now it may advance
    exact = sessions.resume(workspace=str(tmp_path), run_id=target.run_id)
    assert [c["runId"] for c in exact["candidates"]] == [target.run_id]


def test_a_session_is_found_and_resumed_only_in_its_own_workspace(sessions, tmp_path):
    mine, theirs = str(tmp_path / "mine"), str(tmp_path / "theirs")
    target = sessions.start(CHECKED, goal="rotate the signing keys", workspace=theirs)
    sessions.start(CHECKED, goal="tidy the readme", workspace=mine)
    for query in (None, "signing keys"):
        found = sessions.resume(workspace=mine, query=query, same_workspace_only=True)
        assert target.run_id not in [c["runId"] for c in found["candidates"]], query
    by_id = sessions.resume(workspace=mine, run_id=target.run_id, same_workspace_only=True)
    assert by_id == {"candidates": [], "totalEligible": 0}
    resume = sessions.checkpoint(target.checkpoint_token)["resumeToken"]
    for workspace in (mine, None):
        with pytest.raises(SessionTokenError) as refused:
            sessions.continue_session(resume, intent="rehydrate", workspace=workspace)
        assert refused.value.data["reason"] == "TOKEN_SCOPE_MISMATCH"
        assert theirs not in refused.value.message
    reread = sessions.continue_session(resume, intent="rehydrate", workspace=theirs)
    assert reread.continue_token.startswith("ct_")
    # the continue token itself is the session's own capability: it re-reads anywhere
    assert sessions.continue_session(target.continue_token).outcome == "current"


def test_a_cancelled_session_takes_no_answer(sessions):
    step = sessions.start(CHECKED, goal="g")
    assert sessions.cancel(step.run_id, "wrong task")["status"] == "cancelled"
    with pytest.raises(AnswerNotApplied):
        sessions.continue_session(step.continue_token, notes="PLAN: a")
    assert sessions.list()[0]["status"] == "cancelled"
    with pytest.raises(RunNotFound):
        sessions.rehydrate("wf-000000000000")


RACER = r"""
import sys, json
from pathlib import Path
from workrail_engine.sessions import SessionService
from workrail_engine.answers.record import AnswerNotApplied
home, database, token, notes, go = sys.argv[1:6]
service = SessionService(home=Path(home), database=database or None)
service.store  # connected before the start line
while not Path(go).exists():
    pass
try:
    step = service.continue_session(token, notes=notes)
    print(json.dumps({"outcome": step.outcome}))
except AnswerNotApplied as refused:
    print(json.dumps({"outcome": "refused", "state": refused.data["state"]["pending"]["stepId"]}))
"""


def _race(home: Path, database: str, token: str, answers: list[str], tmp_path: Path) -> list:
    go = tmp_path / f"go-{uuid.uuid4().hex}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(home), database, token, notes, str(go)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ},
        )
        for notes in answers
    ]
    import time

    time.sleep(1.5)  # both connected and spinning
    go.touch()
    return [json.loads(p.communicate(timeout=60)[0]) for p in procs]


def _two_processes(service: SessionService, home: Path, database: str, tmp_path: Path) -> None:
    step = service.start(CHECKED, goal="race")
    results = _race(home, database, step.continue_token, ["PLAN: one", "PLAN: two"], tmp_path)
    assert sorted(r["outcome"] for r in results) == ["advanced", "refused"]
    assert [r["state"] for r in results if r["outcome"] == "refused"] == ["quiet"]
    assert len(service.get(step.run_id)["step_results"]) == 1
    step2 = service.rehydrate(step.run_id)
    same = _race(home, database, step2.continue_token, ["same", "same"], tmp_path)
    assert sorted(r["outcome"] for r in same) == ["advanced", "replayed"]
    assert service.rehydrate(step.run_id).attempt == 3


@pytest.mark.slow
def test_two_processes_answer_one_step_on_sqlite(tmp_path):
    home = tmp_path / "runs"
    service = SessionService(home=home)
    try:
        _two_processes(service, home, "", tmp_path)
    finally:
        service.close()


@pytest.mark.slow
def test_two_store_clients_answer_one_step_on_postgres(tmp_path, postgres_url):
    service = SessionService(database=postgres_url)
    other = SessionService(database=postgres_url)
    try:
        _two_processes(service, tmp_path / "unused", postgres_url, tmp_path)
        # another "machine" (another store client) finds the session by its notes, finishes it
        found = other.resume(workspace=str(tmp_path), query="race")["candidates"]
        assert found and found[0]["workflowId"] == "checked-flow"
        step = other.continue_session(found[0]["resumeToken"])
        assert other.continue_session(step.continue_token, notes="end").is_complete
    finally:
        service.close()
        other.close()
