"""`workrail replay` of forked runs and forked sessions, recorded by the real processes: runs by
`workrail run`, `workrail continue` and `workrail fork` as a user types them, sessions through
the stdio MCP server. A fork replays as its own walk went — on its parent's values up to each
fork point, its own after — so the unchanged workflow replays clean and an edit diverges where
the fork's values meet it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_replay_cli import ANSWERS, FLOW, edited, edited_as, line_of, replay
from tests.cli.test_runs_cli import workrail
from tests.mcp.conftest import write_workflow
from tests.mcp.test_run_recovery import StdioSession
from tests.mcp.test_sessions_mcp import call
from workrail_engine.replay.records import LACKS
from workrail_engine.runs.answer_delivery import MESSAGE

pytestmark = pytest.mark.slow


def _echo(step_id: str, *words: str, **extra) -> dict:
    return {"id": step_id, "title": step_id, "run": {"command": ["echo", *words]}, **extra}


# The parameter `mode` decides `lint` (before the forks' points) and `ship` (at the first fork's
# point); the context `size`, set by the answer to `triage`, decides `build`.
GATED_FLOW = {
    "id": "gated-flow",
    "name": "Gated flow",
    "description": "triage by the agent, then commands gated on the mode and the size",
    "version": "1.0.0",
    "parameters": {
        "type": "object",
        "properties": {"mode": {"type": "string", "default": "full"}},
    },
    "steps": [
        {"id": "triage", "title": "Triage", "prompt": "Size the task"},
        _echo("lint", "lint", runCondition={"var": "mode", "equals": "full"}),
        _echo("build", "build", runCondition={"var": "size", "equals": "large"}),
        _echo("ship", "ship", runCondition={"var": "mode", "equals": "quick"}),
        _echo("report", "{{parameters.mode}}"),
    ],
}


def _done(out) -> dict:
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)


def _replayed(root: Path, *args: str) -> tuple[int, dict[str, dict]]:
    """`workrail replay --format json ARGS`: its exit code and each history's report, by id."""
    out = replay(root, "--format", "json", *args)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    return out.returncode, {h["id"]: h for h in json.loads(out.stdout)["histories"]}


@pytest.fixture(scope="module")
def forked_runs(tmp_path_factory) -> tuple[Path, list[str]]:
    """`record_forked_runs` in a root of the module's, on SQLite."""
    root = tmp_path_factory.mktemp("forked-runs")
    return root, record_forked_runs(root)


def record_forked_runs(root: Path, before_forks: Callable[[], object] = lambda: None) -> list[str]:
    """``root`` holding the gated flow, a finished run of it (mode full), a fork of that run at
    `ship` (mode quick) and a fork of the fork at `report` (mode other): the run ids, in order
    (the store: ``root/home``, or the environment's WORKRAIL_DATABASE_URL). ``before_forks``
    is called once the first run has ended."""
    project = root / "project"
    write_workflow(project / "workflows", GATED_FLOW)
    waiting = workrail(project, root, "run", "gated-flow")
    assert waiting.returncode == 0, waiting.stderr
    parent = waiting.stderr.split("started ", 1)[1].split()[0]
    answered = _done(
        workrail(
            project, root, "continue", parent, "--step", "triage", "--output", "sized it",
            "--context", "size=large", "--format", "json",
        )
    )  # fmt: skip
    ran = {r["step_name"]: r["status"] for r in answered["step_results"]}
    assert ran == {
        "triage": "success",
        "lint": "success",
        "build": "success",
        "ship": "skipped",
        "report": "success",
    }
    before_forks()
    fork = _done(
        workrail(
            project, root, "fork", parent, "--from", "ship", "--param", "mode=quick",
            "--format", "json",
        )
    )  # fmt: skip
    assert [r["status"] for r in fork["step_results"]][3:] == ["success", "success"]
    second = _done(
        workrail(
            project, root, "fork", fork["workflow_id"], "--from", "report",
            "--param", "mode=other", "--format", "json",
        )
    )  # fmt: skip
    assert second["step_results"][-1]["output"]["stdout"] == "other\n"
    return [parent, fork["workflow_id"], second["workflow_id"]]


def test_forked_runs_replay_clean_on_their_own_values_before_and_after_the_fork(forked_runs):
    root, runs = forked_runs
    code, histories = _replayed(root)
    assert code == 0, histories
    assert set(histories) == set(runs)
    # every recorded step walked again: the kept prompt step too, with its answer's context
    assert [(histories[r]["holds"], histories[r]["stepsReplayed"]) for r in runs] == [(True, 5)] * 3
    assert [histories[r]["forkedFrom"] for r in runs] == [None, *forked_from_links(runs)]


def forked_from_links(runs: list[str]) -> list[dict]:
    """What replay's JSON says each fork of `record_forked_runs` was forked from (a run forks at
    a step key: no attempt)."""
    parent, fork, _ = runs
    return [
        {"runId": parent, "stepId": "ship", "stepAttempt": None},
        {"runId": fork, "stepId": "report", "stepAttempt": None},
    ]


def test_on_postgres_forked_runs_replay_clean(postgres_url, monkeypatch, tmp_path):
    monkeypatch.setenv("WORKRAIL_DATABASE_URL", postgres_url)
    runs = record_forked_runs(tmp_path)
    out = replay(tmp_path, "--format", "json", WORKRAIL_DATABASE_URL=postgres_url)
    assert out.returncode == 0, out.stdout + out.stderr
    histories = {h["id"]: h for h in json.loads(out.stdout)["histories"]}
    assert [(histories[r]["holds"], histories[r]["stepsReplayed"]) for r in runs] == [(True, 5)] * 3
    assert [histories[r]["forkedFrom"] for r in runs] == [None, *forked_from_links(runs)]


def test_a_fork_of_a_run_whose_answer_was_not_recorded_says_where_its_replay_stops(tmp_path):
    """A run recorded before the answer's message was kept (an old store), then forked: its
    fork could keep no answer for `triage`, so replay cannot walk past it — in the fork, and the
    fork of the fork, as in the run — and says so there, naming the run and the step."""

    def as_an_old_store_recorded_it() -> None:
        with sqlite3.connect(tmp_path / "home" / "runs" / "runs.sqlite") as conn:
            conn.execute(
                "UPDATE workrail_answers SET given = NULL,"
                f" response = json_remove(response, '$.{MESSAGE}')"
            )

    runs = record_forked_runs(tmp_path, as_an_old_store_recorded_it)
    code, histories = _replayed(tmp_path)
    assert code == 0, histories
    for run in runs:
        assert (histories[run]["holds"], histories[run]["stepsReplayed"]) == (True, 0)
        assert histories[run]["stopped"] == {
            "at": "step key triage",
            "stepId": "triage",
            "lack": LACKS["answer_message"],
        }, run
        assert histories[run]["lacks"] == [LACKS["answer_message"]], run
    out = replay(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    path = tmp_path / "project" / "workflows" / "gated-flow.json"
    triage = line_of(path, '"id": "triage"') - 1  # the step's object starts the line before
    notes = [line for line in out.stdout.splitlines() if " WR905 " in line]
    parent, fork, second = runs
    assert sorted(notes[1:]) == sorted(
        [
            f"workflows/{path.name}:{triage}:5: WR905 run {parent}: replay stops at step 'triage'"
            " (step key triage): the history predates what replay reads and lacks the answer given"
            " to it; the steps from there on are not replayed",
            *(
                f"workflows/{path.name}:{triage}:5: WR905 run {run} (forked from {of} at {at}):"
                " replay stops at step 'triage' (step key triage): the history predates what replay"
                " reads and lacks the answer given to it; the steps from there on are not replayed"
                for run, of, at in ((fork, parent, "ship"), (second, fork, "report"))
            ),
        ]
    ), out.stdout
    assert "3 recorded histories of this workflow predate" in notes[0], out.stdout


def test_an_edit_at_the_forks_point_diverges_in_the_forks_alone(forked_runs, tmp_path):
    root, runs = forked_runs
    copy = tmp_path / "root"
    shutil.copytree(root, copy)
    path = edited_as(
        copy, GATED_FLOW, lambda f: f["steps"][3]["runCondition"].update(equals="fast")
    )
    out = replay(copy)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 hold, 2 diverge" in out.stdout
    heads = [line for line in out.stdout.splitlines() if " WR901 " in line]
    lines = path.read_text().splitlines()
    ship = line_of(path, '"id": "ship"')
    condition = next(n for n, line in enumerate(lines, 1) if n > ship and "runCondition" in line)
    where = f"workflows/{path.name}:{condition}:"
    assert len(heads) == 2 and all(h.startswith(where) for h in heads), out.stdout
    parent, fork, second = runs
    assert f"run {fork} (forked from {parent} at ship): " in heads[0] + heads[1], heads
    assert f"run {second} (forked from {fork} at report): " in heads[0] + heads[1], heads
    assert out.stdout.count("step 'ship' (step key ship) is skipped now") == 2, out.stdout


def test_forked_runs_exported_replay_as_from_the_store(forked_runs, tmp_path):
    root, runs = forked_runs
    fixtures = tmp_path / "fixtures"
    exported = replay(root, "--export", str(fixtures))
    assert exported.returncode == 0, exported.stdout + exported.stderr
    code, histories = _replayed(root, "--from", str(fixtures))
    assert code == 0 and set(histories) == set(runs)
    assert all(h["holds"] and h["stepsReplayed"] == 5 for h in histories.values()), histories
    assert [histories[r]["forkedFrom"] for r in runs[1:]] == forked_from_links(runs)


# --- forked sessions ------------------------------------------------------------------------


def _started(server: StdioSession, project: Path) -> dict:
    arguments = {"workflowId": "replay-flow", "workspacePath": str(project), "goal": "ship it"}
    return call(server, "start_workflow", arguments)


def _answered(server: StdioSession, token: str, notes: str, context: dict) -> dict:
    return call(
        server,
        "continue_workflow",
        {"continueToken": token, "output": {"notesMarkdown": notes}, "context": context},
    )


@pytest.fixture(scope="module")
def forked_session(tmp_path_factory) -> tuple[Path, str, str, str]:
    """A root holding the replay flow, a finished session of it, a fork of that session at its
    second round of work (attempt 3) whose answer stops the rounds and changes the mode, so the
    fork skips the gate its parent passed, and a fork at its first step: (root, the session's
    id, the first fork's, the second's)."""
    root = tmp_path_factory.mktemp("forked-session")
    project = root / "project"
    write_workflow(project / "workflows", FLOW)
    server = StdioSession(project, root)
    try:
        served = [_started(server, project)]
        step = served[0]
        for notes, context in ANSWERS:
            step = _answered(server, step["continueToken"], notes.format(home="~"), context)
            served.append(step)
        assert step["isComplete"], step
        second_round = call(
            server,
            "continue_workflow",
            {"continueToken": served[2]["continueToken"], "intent": "rehydrate"},
        )
        assert second_round["forkOf"]["stepId"] == "work", second_round
        fork = _answered(
            server,
            second_round["continueToken"],
            "round two, cut short",
            {"more": False, "mode": "short"},
        )
        assert fork["forkedFrom"]["stepAttempt"] == 3, fork
        assert fork["pending"]["stepId"] == "ship"  # the gate is skipped in the fork
        done = _answered(server, fork["continueToken"], "shipped without the gate", {})
        assert done["isComplete"], done
        # and a fork at the first step, which copies no answer: no rounds, no gate, left at ship
        at_plan = call(
            server,
            "continue_workflow",
            {"continueToken": served[0]["continueToken"], "intent": "rehydrate"},
        )
        first = _answered(server, at_plan["continueToken"], "PLAN: none", {"more": False})
        assert first["pending"]["stepId"] == "ship", first
    finally:
        server.kill()
    return root, step["runId"], fork["runId"], first["runId"]


def test_a_forked_session_replays_clean_its_parents_answers_and_its_own(forked_session):
    root, session, fork, at_plan = forked_session
    code, histories = _replayed(root)
    assert code == 0, histories
    # the parent's five answers; the fork's: the two it copied, then its own two; the fork at
    # the first step: its answer, then waiting at ship
    assert sorted(
        (histories[h]["holds"], histories[h]["stepsReplayed"], histories[h]["lacks"])
        for h in histories
    ) == [(True, 1, []), (True, 4, []), (True, 5, [])]
    assert (histories[session]["stepsReplayed"], histories[fork]["stepsReplayed"]) == (5, 4)
    # a session forks at an attempt of a step
    assert [histories[h]["forkedFrom"] for h in (session, fork, at_plan)] == [
        None,
        {"runId": session, "stepId": "work", "stepAttempt": 3},
        {"runId": session, "stepId": "plan", "stepAttempt": 1},
    ]


def test_a_forked_session_diverges_at_an_edit_before_and_after_its_fork_point(
    forked_session, tmp_path
):
    root, session, fork, at_plan = forked_session
    copy = tmp_path / "root"
    shutil.copytree(root, copy)
    # before the fork point: a copied answer the new checks block, in the fork as in its parent
    edited(copy, lambda f: f["steps"][0]["validationCriteria"][0].update(value="DESIGN"))
    _, histories = _replayed(copy)
    assert {
        h["id"]: (h["divergence"]["kind"], h["divergence"]["at"]) for h in histories.values()
    } == {
        session: ("blocked", "attempt 1"),
        fork: ("blocked", "attempt 1"),
        at_plan: ("blocked", "attempt 1"),  # its own answer
    }
    # after it: the gate now holds on the fork's mode alone, where the parent passed it
    edited(copy, lambda f: f["steps"][2]["runCondition"].update(equals="short"))
    code, histories = _replayed(copy)
    assert code == 1 and histories.pop(at_plan)["holds"]  # no mode: the gate skipped still
    assert {h["id"]: h["divergence"]["at"] for h in histories.values()} == {
        session: "attempt 4",
        fork: "attempt 4",
    }
    assert histories[session]["divergence"]["recorded"] == "gate"
    assert histories[fork]["divergence"]["served"] == "gate"
    assert {h["divergence"]["member"] for h in histories.values()} == {"runCondition"}


def test_a_forked_session_exported_replays_as_from_the_store(forked_session, tmp_path):
    root, session, fork, at_plan = forked_session
    fixtures = tmp_path / "fixtures"
    exported = replay(root, "--export", str(fixtures))
    assert exported.returncode == 0, exported.stdout + exported.stderr
    assert {p.stem for p in fixtures.rglob("*.json")} == {session, fork, at_plan}
    code, histories = _replayed(root, "--from", str(fixtures))
    assert code == 0
    assert histories[fork]["forkedFrom"] == {"runId": session, "stepId": "work", "stepAttempt": 3}
    assert {h: histories[h]["stepsReplayed"] for h in histories} == {
        session: 5,
        fork: 4,
        at_plan: 1,
    }
    copy = tmp_path / "root"
    shutil.copytree(root, copy)
    edited(copy, lambda f: f["steps"][2]["runCondition"].update(equals="short"))
    code_store, from_store = _replayed(copy)
    code_fixtures, from_fixtures = _replayed(copy, "--from", str(fixtures))
    assert code_store == code_fixtures == 1
    assert from_store == from_fixtures and not from_fixtures[fork]["holds"]
