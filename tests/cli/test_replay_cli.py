"""`workrail replay` on histories recorded by a real server: a session and a run of one workflow,
answered through the stdio MCP server; then the workflow edited and replayed through the
`workrail` command as a user runs it — one test per kind of divergence, the unchanged workflow,
the exit codes and formats, fixtures exported and replayed from another root, a store written
before replay's columns."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import write_workflow
from tests.mcp.test_run_recovery import StdioSession
from tests.mcp.test_sessions_mcp import FLOW as SESSION_FLOW
from tests.mcp.test_sessions_mcp import call
from workrail_engine.replay.fixtures import MAX_FIXTURE_BYTES

pytestmark = pytest.mark.slow

FLOW = {
    "id": "replay-flow",
    "name": "Replay flow",
    "description": "a plan, rounds of work while there is more, a gate in full mode, shipping",
    "version": "1.0.0",
    "steps": [
        copy.deepcopy(SESSION_FLOW["steps"][0]),  # "plan": its notes must hold PLAN
        {
            "id": "rounds",
            "type": "loop",
            "title": "Rounds",
            "loop": {
                "type": "while",
                "condition": {"var": "more", "equals": True},
                "maxIterations": 5,
            },
            "body": [{"id": "work", "title": "Work", "prompt": "Work a round"}],
        },
        {
            "id": "gate",
            "title": "Gate",
            "prompt": "Check the gate",
            "runCondition": {"var": "mode", "equals": "full"},
        },
        {"id": "ship", "title": "Ship", "prompt": "Ship it"},
    ],
}
# (notes, context) of each answer, in order: plan, two rounds, the gate, shipping
ANSWERS = [
    ("PLAN: two rounds", {"more": True, "mode": "full"}),
    ("round one", {"more": True}),
    ("round two", {"more": False}),
    ("gate passed: tests run in {home}/checkout", {}),  # a path of the recording machine
    ("shipped", {}),
]


def record(root: Path, **env: str) -> Path:
    """``root/project/workflows/replay-flow.json``, and one finished session and one finished run
    of it answered through a real server (its store: ``root/home``, or ``env``'s database)."""
    project = root / "project"
    write_workflow(project / "workflows", FLOW)
    server = StdioSession(project, root, **env)
    try:
        step = call(
            server,
            "start_workflow",
            {"workflowId": "replay-flow", "workspacePath": str(project), "goal": "ship it"},
        )
        for notes, context in ANSWERS:
            step = call(
                server,
                "continue_workflow",
                {
                    "continueToken": step["continueToken"],
                    "output": {"notesMarkdown": notes.format(home=Path.home())},
                    "context": context,
                },
            )
        assert step["isComplete"], step
        run = call(server, "run_workflow", {"workflow_name": "replay-flow"})
        for notes, context in ANSWERS:
            run = call(
                server,
                "continue_workflow",
                {
                    "workflow_id": run["workflow_id"],
                    "output": notes.format(home=Path.home()),
                    "context": context,
                },
            )
        assert run["status"] == "success", run
    finally:
        server.kill()
    return root


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A root holding the workflow and its recorded session and run (SQLite, in ``home``)."""
    return record(tmp_path_factory.mktemp("recorded"))


@pytest.fixture
def copy_of(recorded, tmp_path) -> Path:
    """The recorded root copied, to be edited by one test."""
    root = tmp_path / "root"
    shutil.copytree(recorded, root)
    return root


def replay(
    root: Path, *args: str, cwd: Path | None = None, **extra: str
) -> subprocess.CompletedProcess:
    env = {**os.environ, "WORKRAIL_HOME": str(root / "home")}
    env.pop("WORKRAIL_DATABASE_URL", None)
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-c", "from workrail_engine.cli import main; main()", "replay", *args],
        cwd=cwd or root / "project",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def edited(root: Path, change) -> Path:
    return edited_as(root, FLOW, change)


def edited_as(root: Path, workflow: dict, change) -> Path:
    """``workflow`` changed by ``change``, written over its file in ``root``'s project."""
    flow = copy.deepcopy(workflow)
    change(flow)
    return write_workflow(root / "project" / "workflows", flow)


def line_of(path: Path, text: str) -> int:
    """The 1-based line of the first line of ``path`` holding ``text``."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def diverged(out: subprocess.CompletedProcess, code: str, path: Path, line: int) -> None:
    """Both histories (the session's and the run's) diverge with ``code`` at ``line``."""
    assert out.returncode == 1, out.stdout + out.stderr
    heads = [line for line in out.stdout.splitlines() if f" {code} " in line]
    where = f"workflows/{path.name}:{line}:"
    assert len(heads) == 2 and all(h.startswith(where) for h in heads), out.stdout
    assert {h.split(f" {code} ")[1].split()[0] for h in heads} == {"session", "run"}
    assert "0 hold, 2 diverge" in out.stdout


def test_an_unchanged_workflow_replays_clean(recorded):
    out = replay(recorded)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "Replayed 2 histories of 1 workflow file: 2 hold"


def test_a_condition_that_no_longer_holds_serves_another_step(copy_of):
    path = edited(copy_of, lambda f: f["steps"][2]["runCondition"].update(equals="short"))
    out = replay(copy_of)
    diverged(out, "WR901", path, line_of(path, '"runCondition"'))
    assert "'gate'" in out.stdout and "runCondition" in out.stdout


def test_a_recorded_answer_the_new_checks_block(copy_of):
    path = edited(copy_of, lambda f: f["steps"][0]["validationCriteria"][0].update(value="DESIGN"))
    out = replay(copy_of)
    diverged(out, "WR902", path, line_of(path, '"validationCriteria"'))
    assert "would now be blocked: Start with PLAN" in out.stdout


def test_a_step_renamed(copy_of):
    path = edited(copy_of, lambda f: f["steps"][3].update(id="deliver"))
    out = replay(copy_of)
    diverged(out, "WR903", path, line_of(path, '"deliver"'))
    assert "step 'ship'" in out.stdout and "'deliver' is served in its place" in out.stdout


def test_a_loop_that_stops_sooner(copy_of):
    path = edited(copy_of, lambda f: f["steps"][1]["loop"].update(maxIterations=1))
    out = replay(copy_of)
    diverged(out, "WR904", path, line_of(path, '"maxIterations"'))
    assert "loop 'rounds' now stops sooner" in out.stdout


def test_a_loop_that_runs_longer(copy_of):
    path = edited(
        copy_of, lambda f: f["steps"][1]["loop"].update(condition={"var": "mode", "equals": "full"})
    )
    out = replay(copy_of)
    diverged(out, "WR904", path, line_of(path, '"condition"'))
    assert "loop 'rounds' now runs longer" in out.stdout


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_the_machine_formats_are_validates(copy_of, fmt):
    path = edited(copy_of, lambda f: f["steps"][3].update(id="deliver"))
    out = replay(copy_of, "--format", fmt)
    assert out.returncode == 1, out.stderr
    line = line_of(path, '"deliver"')
    if fmt == "json":
        report = json.loads(out.stdout)
        found = report["files"][0]["diagnostics"]
        assert [(d["code"], d["line"]) for d in found] == [("WR903", line)] * 2
        assert {h["kind"]: h["holds"] for h in report["histories"]} == {
            "session": False,
            "run": False,
        }
    elif fmt == "sarif":
        results = json.loads(out.stdout)["runs"][0]["results"]
        assert [r["ruleId"] for r in results] == ["WR903", "WR903"]
        assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == line
    else:
        assert out.stdout.count(f"::error file=workflows/{path.name},line={line},") == 2


def test_usage_errors_exit_2(copy_of, tmp_path):
    missing = replay(copy_of, "--from", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no such directory of replay fixtures" in missing.stderr
    both = replay(copy_of, "--from", str(tmp_path), "--export", str(tmp_path / "out"))
    assert both.returncode == 2 and "--export" in both.stderr
    nothing = replay(copy_of, "no-such-file.json")
    assert nothing.returncode == 2 and "no such file or directory" in nothing.stderr
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "not-one.json").write_text("[]")
    malformed = replay(copy_of, "--from", str(fixtures))
    assert malformed.returncode == 2 and "not-one.json: not a replay fixture" in malformed.stderr
    (fixtures / "not-one.json").write_bytes(b" " * (MAX_FIXTURE_BYTES + 1))
    huge = replay(copy_of, "--from", str(fixtures))
    assert (
        huge.returncode == 2 and f"a replay fixture is at most {MAX_FIXTURE_BYTES:,}" in huge.stderr
    )


def test_exported_fixtures_replay_identically_from_another_root(copy_of, tmp_path):
    fixtures = copy_of / "project" / "replay-fixtures"
    # a secret the workflow declares now, whose value an answer holds: masked in the fixture
    edited(copy_of, lambda f: f.update(secrets=["DEPLOY_TOKEN"]))
    exported = replay(
        copy_of,
        "--export",
        str(fixtures),
        "workflows/replay-flow.json",
        DEPLOY_TOKEN="round one",
    )
    assert exported.returncode == 0, exported.stderr
    files = sorted(fixtures.rglob("*.json"))
    assert len(files) == 2
    for path in files:
        text = path.read_text()
        assert "round one" not in text and "***" in text, path
        assert str(copy_of) not in text and str(Path.home()) not in text, path
        assert "tests run in ~/checkout" in text, path
        assert len(text) < 8000, path  # small: what replay reads, not the whole record
    path = edited(copy_of, lambda f: f["steps"][3].update(id="deliver"))
    here = replay(
        copy_of, "--from", "replay-fixtures", path.relative_to(copy_of / "project").as_posix()
    )
    # another machine: the project alone (workflow and fixtures) under another root, no store
    elsewhere = tmp_path / "elsewhere" / "checkout"
    shutil.copytree(copy_of / "project", elsewhere)
    there = replay(
        tmp_path / "elsewhere",
        "--from",
        "replay-fixtures",
        path.relative_to(copy_of / "project").as_posix(),
        cwd=elsewhere,
    )
    assert here.returncode == there.returncode == 1, here.stdout + here.stderr
    assert here.stdout == there.stdout and "WR903" in there.stdout


REPLAY_COLUMNS = ("workflow_hash", "context_before", "given", "context_after")


def test_a_store_from_before_replays_as_far_as_it_can_and_is_migrated_in_place(copy_of):
    database = copy_of / "home" / "runs" / "runs.sqlite"
    with sqlite3.connect(database) as conn:  # as a store written before replay's record
        for column in REPLAY_COLUMNS:
            conn.execute(f"ALTER TABLE workrail_answers DROP COLUMN {column}")
        conn.execute(
            "UPDATE workrail_session_positions SET state = json_remove(state, '$.start_context')"
        )
    out = replay(copy_of)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "WR905" in out.stdout and "lack the context it started with" in out.stdout
    assert "2 hold" in out.stdout
    # a server opening the old store adds the columns in place, keeping the answers there
    server = StdioSession(copy_of / "project", copy_of)
    try:
        call(server, "list_workflows", {"include_running": True})
    finally:
        server.kill()
    with sqlite3.connect(database) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(workrail_answers)")}
        kept = conn.execute("SELECT COUNT(*) FROM workrail_answers").fetchone()[0]
    assert set(REPLAY_COLUMNS) <= columns
    assert kept == 10


def test_on_postgres_an_old_store_replays_diverges_and_is_migrated_in_place(postgres_url, tmp_path):
    import psycopg

    root = record(tmp_path / "pg", WORKRAIL_DATABASE_URL=postgres_url)
    clean = replay(root, WORKRAIL_DATABASE_URL=postgres_url)
    assert clean.returncode == 0 and "2 hold" in clean.stdout, clean.stdout + clean.stderr
    with psycopg.connect(
        postgres_url, autocommit=True
    ) as conn:  # as written before replay's record
        for column in REPLAY_COLUMNS:
            conn.execute(f"ALTER TABLE workrail.answers DROP COLUMN {column}")
        conn.execute(
            "UPDATE workrail.session_positions SET state = (state::jsonb - 'start_context')::text"
        )
    path = edited(root, lambda f: f["steps"][3].update(id="deliver"))
    out = replay(root, WORKRAIL_DATABASE_URL=postgres_url)
    diverged(out, "WR903", path, line_of(path, '"deliver"'))
    assert "WR905" in out.stdout
    server = StdioSession(root / "project", root, WORKRAIL_DATABASE_URL=postgres_url)
    try:
        call(server, "list_workflows", {"include_running": True})
    finally:
        server.kill()
    with psycopg.connect(postgres_url) as conn:
        columns = {
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = 'workrail' AND table_name = 'answers'"
            )
        }
    assert set(REPLAY_COLUMNS) <= columns


COMMANDS_FLOW = {
    "id": "command-flow",
    "name": "Command flow",
    "description": "commands: one alone, a parallel group, a loop of them, one on a condition",
    "version": "1.0.0",
    "steps": [
        {"id": "hello", "title": "Hello", "run": {"command": ["echo", "hi"], "timeoutSeconds": 10}},
        {
            "id": "both",
            "type": "parallel",
            "title": "Both",
            "steps": [
                {"id": f"side-{n}", "title": f"Side {n}", "run": {"command": ["echo", str(n)]}}
                for n in (1, 2, 3)
            ],
        },
        {
            "id": "thrice",
            "type": "loop",
            "title": "Thrice",
            "loop": {"type": "for", "count": 3, "maxIterations": 5},
            "body": [{"id": "tick", "title": "Tick", "run": {"command": ["true"]}}],
        },
        {
            "id": "greeted",
            "title": "Greeted",
            "run": {"command": ["true"]},
            "runCondition": {"var": "steps.hello.output.stdout", "startsWith": "hi"},
        },
    ],
}


def test_a_run_of_commands_replays_its_recorded_outcomes_and_runs_nothing(tmp_path):
    root = tmp_path / "root"
    project = root / "project"
    write_workflow(project / "workflows", COMMANDS_FLOW)
    env = {**os.environ, "WORKRAIL_HOME": str(root / "home")}
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "from workrail_engine.cli import main; main()",
            "run",
            "command-flow",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    clean = replay(root)
    assert clean.returncode == 0 and "1 hold" in clean.stdout, clean.stdout + clean.stderr
    # the recorded output decides now: replay executes no command (none would print "bye")
    path = edited_as(
        root,
        COMMANDS_FLOW,
        lambda f: f["steps"][3]["runCondition"].update(startsWith="bye"),
    )
    parted = replay(root)
    assert parted.returncode == 1, parted.stdout
    (head,) = [line for line in parted.stdout.splitlines() if " WR901 " in line]
    condition = line_of(path, '"runCondition"')
    assert head.startswith(f"workflows/{path.name}:{condition}:"), head
    assert "step 'greeted' (step key greeted) is skipped now" in head
    # the recorded output judged by the criteria as they are now
    path = edited_as(
        root,
        COMMANDS_FLOW,
        lambda f: f["steps"][0].update(
            validationCriteria=[{"type": "contains", "value": "bye", "message": "Say bye"}]
        ),
    )
    judged = replay(root)
    assert judged.returncode == 1, judged.stdout
    (head,) = [line for line in judged.stdout.splitlines() if " WR902 " in line]
    assert head.startswith(f"workflows/{path.name}:{line_of(path, 'validationCriteria')}:"), head
    assert "the output recorded for step 'hello'" in head and "Say bye" in head
