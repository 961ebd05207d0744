"""No run is left running without a live process, nor waiting on an answered step; an
answer is applied once or refused with the reason. Real `workrail` processes throughout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_runs_cli import workrail

pytestmark = pytest.mark.slow

LIVENESS = 5.0  # seconds: the longest a run may be left without a process acting on it


def _flow(seconds: float) -> dict:
    return {
        "id": "plan-then-build",
        "name": "Plan then build",
        "description": "An agent step, then a long command step, then an agent step.",
        "version": "1.0.0",
        "steps": [
            {"id": "plan", "title": "Plan", "prompt": "Write the plan."},
            {
                "id": "build",
                "title": "Build",
                "run": {
                    "command": [
                        sys.executable,
                        "-c",
                        "import os, time; open('starts', 'a').write(f'{os.getpid()}\\n'); "
                        f"time.sleep({seconds}); open('builds', 'a').write('done\\n')",
                    ]
                },
            },
            {"id": "report", "title": "Report", "prompt": "Report."},
        ],
    }


def _project(tmp_path: Path, build_seconds: float) -> Path:
    root = tmp_path / "project"
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "plan-then-build.json").write_text(json.dumps(_flow(build_seconds)))
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A build of 1 s: what these tests look at happens after the build (the continue that
    started it has ended, or it waits for the run's next step either way)."""
    return _project(tmp_path, 1)


def _status(project: Path, tmp_path: Path, run_id: str) -> dict:
    out = workrail(project, tmp_path, "run-status", run_id, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _until(check, seconds: float, what: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"not within {seconds} s: {what}")


def _build_ended(project: Path, deadline: float) -> None:
    """Waits for the build step's own mark of its end before asking for the run's status: each
    `workrail run-status` is a process that opens the store (≈ 1 s of CPU), so polling it through
    the build's seconds cost a few seconds of CPU per test for nothing."""
    _until(lambda: (project / "builds").exists(), deadline - time.monotonic(), "the build ends")


def _kill_9_the_worker(tmp_path: Path) -> None:
    """kill -9 the worker executing the run (started by `continue`), as a crash would."""
    worker = _until(
        lambda: subprocess.run(
            ["pgrep", "-f", f"worker --store {tmp_path / 'home' / 'runs'}"],
            capture_output=True,
            text=True,
        ).stdout.split(),
        10,
        "the worker process",
    )
    for pid in worker:
        os.kill(int(pid), signal.SIGKILL)


def _started_waiting(project: Path, tmp_path: Path) -> str:
    out = workrail(project, tmp_path, "run", "plan-then-build")
    assert out.returncode == 0, out.stderr
    return out.stderr.split("started ", 1)[1].split()[0]


def _continue_process(project: Path, tmp_path: Path, run_id: str, text: str, wait: str):
    """A `workrail continue --step plan` of its own (to race another)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from workrail_engine.cli import main; main()",
            "--project",
            str(project),
            "continue",
            run_id,
            "--step",
            "plan",
            "--output",
            text,
            "--wait",
            wait,
        ],
        cwd=project,
        env={**os.environ, "WORKRAIL_HOME": str(tmp_path / "home")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    ("wait", "build_seconds"),
    # The build outlasts the continue's wait: its process is gone while the build still runs.
    # (With no wait the worker it started is still importing when it has gone.)
    [pytest.param("2", 4, id="2"), pytest.param("0", 1, id="0")],
)
def test_continue_with_a_short_wait_leaves_the_run_with_a_live_process(
    tmp_path, wait, build_seconds
):
    project = _project(tmp_path, build_seconds)
    run_id = _started_waiting(project, tmp_path)
    out = workrail(project, tmp_path, "continue", run_id, "--output", "the plan", "--wait", wait)
    assert out.returncode == 0, out.stderr
    assert "waiting for the agent at step 'plan'" not in out.stdout  # it was answered
    assert "Traceback" not in out.stderr and "DBOS" not in out.stderr
    # Nobody opens the store: the run still gets to its next step, with the build run once.
    deadline = time.monotonic() + LIVENESS + 10
    _build_ended(project, deadline)
    snap = _until(
        lambda: (
            (s := _status(project, tmp_path, run_id))["status"] == "waiting"
            and s["waiting"]["step_key"] == "report"
            and s
        ),
        deadline - time.monotonic(),
        "the run reaches the next agent step",
    )
    assert [r["step_name"] for r in snap["step_results"]] == ["plan", "build"]
    assert (project / "starts").read_text().count("\n") == 1  # never killed and run again


def test_continue_follows_the_run_to_its_next_wait(project, tmp_path):
    run_id = _started_waiting(project, tmp_path)
    out = workrail(project, tmp_path, "continue", run_id, "--output", "the plan")
    assert out.returncode == 0, out.stderr
    assert "waiting for the agent at step 'report'" in out.stdout
    assert "success     build" in out.stdout


def test_two_continues_at_once_one_applied_the_other_told(project, tmp_path):
    run_id = _started_waiting(project, tmp_path)
    first, second = (
        _continue_process(project, tmp_path, run_id, text, "1") for text in ("plan A", "plan B")
    )
    results = [(p.wait(timeout=120), *p.communicate()) for p in (first, second)]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 1], results
    refused = next(err for code, _, err in results if code == 1)
    assert "answer not applied" in refused and "another answer" in refused
    applied = next(err for code, _, err in results if code == 0)
    assert "Traceback" not in applied + refused
    deadline = time.monotonic() + LIVENESS + 10
    _build_ended(project, deadline)
    snap = _until(
        lambda: (s := _status(project, tmp_path, run_id))["status"] == "waiting" and s,
        deadline - time.monotonic(),
        "the run reaches the next agent step",
    )
    plan = snap["step_results"][0]
    assert plan["step_name"] == "plan" and plan["output"] in ("plan A", "plan B")
    # the very same answer again is a replay, not an error
    winner = plan["output"]
    again = workrail(project, tmp_path, "continue", run_id, "--step", "plan", "--output", winner)
    assert again.returncode == 0 and "applied before" in again.stderr, again


def test_kill_9_of_the_executing_process_then_listing_runs_recovers_it(tmp_path):
    root = _project(tmp_path, 20)
    run_id = _started_waiting(root, tmp_path)
    # The answer is executed by a worker; kill that executing process mid-step, as a crash would.
    out = workrail(root, tmp_path, "continue", run_id, "--output", "plan", "--wait", "0")
    assert out.returncode == 0, out.stderr
    starts = root / "starts"
    _until(lambda: starts.exists(), 20, "the build starts")
    _kill_9_the_worker(tmp_path)
    time.sleep(0.5)
    listed = workrail(root, tmp_path, "runs")
    assert listed.returncode == 0
    # within the liveness interval another process executes it (the step runs again)
    _until(lambda: starts.read_text().count("\n") >= 2, LIVENESS + 10, "the step runs again")
    snap = _status(root, tmp_path, run_id)
    assert snap["status"] == "running"


def test_on_postgres_two_continues_and_a_killed_executor(tmp_path, postgres_url, monkeypatch):
    monkeypatch.setenv("WORKRAIL_DATABASE_URL", postgres_url)
    monkeypatch.setenv("WORKRAIL_LIVENESS_INTERVAL", "1")
    root = _project(tmp_path, 30)
    run_id = _started_waiting(root, tmp_path)
    first, second = (
        _continue_process(root, tmp_path, run_id, text, "0") for text in ("plan A", "plan B")
    )
    results = [(p.wait(timeout=120), *p.communicate()) for p in (first, second)]
    assert sorted(code for code, _, _ in results) == [0, 1], results
    assert "answer not applied" in next(err for code, _, err in results if code == 1)
    starts = root / "starts"
    _until(lambda: starts.exists(), 30, "a worker starts the build")
    _kill_9_the_worker(tmp_path)
    listed = workrail(root, tmp_path, "runs")
    assert listed.returncode == 0 and run_id in listed.stdout
    # the liveness check (1 s, claimed two checks later) hands the run to a new worker
    _until(lambda: starts.read_text().count("\n") >= 2, 25, "the step runs again")
    assert _status(root, tmp_path, run_id)["status"] == "running"
    cancelled = workrail(root, tmp_path, "cancel", run_id)
    assert cancelled.returncode == 0


def test_on_postgres_a_run_left_by_a_process_that_ended_is_taken_over_at_once(
    tmp_path, postgres_server, monkeypatch
):
    """`workrail run` ends on a step that waits for the agent, leaving its run pending on its
    executor; `continue` then needs another process to execute it. The first process said it was
    leaving, so the worker takes the run at its first liveness check: with a check every 60 s
    and a grace of two checks (what a crash gets), the answer still moves the run at once, and
    a single worker is started however often the follower hands the run over. (A database of
    its own: a worker of the module's other tests, still lingering, would take the run.)"""
    monkeypatch.setenv("WORKRAIL_DATABASE_URL", postgres_server.server.new_database())
    monkeypatch.setenv("WORKRAIL_LIVENESS_INTERVAL", "60")
    root = _project(tmp_path, 1)
    run_id = _started_waiting(root, tmp_path)
    try:
        out = workrail(root, tmp_path, "continue", run_id, "--output", "the plan", "--wait", "40")
        assert out.returncode == 0, out.stderr
        assert "waiting for the agent at step 'report'" in out.stdout, out.stdout + out.stderr
        assert (root / "starts").read_text().count("\n") == 1
        workers = subprocess.run(
            ["pgrep", "-f", f"worker --store {tmp_path / 'home' / 'runs'}"],
            capture_output=True,
            text=True,
        ).stdout.split()
        assert len(workers) == 1, workers
    finally:
        _kill_9_the_worker(tmp_path)  # it would stay three checks (3 min) for dead processes


def test_on_postgres_a_worker_whose_store_is_gone_says_so_and_ends(
    tmp_path, postgres_server, monkeypatch
):
    """The database goes away under a worker executing a run that waits for the agent (its
    thread then blocks in DBOS, which retries for ever): once the worker's reconnects give up
    (3 s here instead of 2 minutes) it says so in one line and ends, instead of waiting for that
    thread at its exit for ever."""
    import psycopg

    url = postgres_server.server.new_database()
    monkeypatch.setenv("WORKRAIL_DATABASE_URL", url)
    monkeypatch.setenv("WORKRAIL_LIVENESS_INTERVAL", "30")  # the worker lingers
    root = _project(tmp_path, 1)
    run_id = _started_waiting(root, tmp_path)
    env = {**os.environ, "WORKRAIL_HOME": str(tmp_path / "home")}
    log = tmp_path / "worker.log"
    patched = "import workrail_engine.runs.sql_store as store; store.RECONNECT_FOR = 3.0; "
    with log.open("w") as stderr:
        worker = subprocess.Popen(
            [sys.executable, "-c", patched + "from workrail_engine.cli.app import main; main()"]
            + ["worker", "--store", str(tmp_path / "home" / "runs")],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stderr=stderr,
        )

    def executing_the_run() -> bool:
        with psycopg.connect(url) as conn:
            return bool(
                conn.execute(
                    "SELECT 1 FROM dbos.workflow_status s JOIN workrail.executors e"
                    " ON e.executor_id = s.executor_id"
                    " WHERE s.workflow_uuid = %s AND s.status = 'PENDING' AND e.pid = %s",
                    (run_id, worker.pid),
                ).fetchall()
            )

    try:
        _until(executing_the_run, 30, "the worker takes the waiting run over")
        postgres_server.stop()
        assert worker.wait(timeout=60) == 1
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        postgres_server.start()
    last = log.read_text().strip().splitlines()[-1]
    assert last.startswith("workrail worker: stopped, the run store failed: OperationalError: ")
    assert last.endswith("its runs are taken over by the next process that opens the store")
