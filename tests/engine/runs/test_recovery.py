"""kill -9 mid-run, then a new process: the run resumes (or is marked interrupted), never stays running."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from runs_support import LOOP_OUTPUTS, PY, loop_of_groups

from workrail_engine.runs.sqlite_store import DATABASE

WAITER = """
import json, sys
from pathlib import Path
from workrail_engine.runs import RunService
service = RunService(Path(sys.argv[1]), allow_commands=sys.argv[4] == "commands", home=Path(sys.argv[2]))
service.start()
print(json.dumps(service.wait(sys.argv[3], float(sys.argv[5]))))
"""

# Starts a run whose one step sleeps 30 s the first time, then does what an exit with a step in
# flight does (`durable.runtime._exit_if_busy`, the CLI's `_leave`) — with a second between the kill and
# `os._exit` for the run's thread, woken by the kill, to record what it would.
KILLED_BY_EXIT = """
import os, sys, time
from pathlib import Path
from workrail_engine.runs import RunOptions, RunService, durable
project, store, log = map(Path, sys.argv[1:4])
service = RunService(project, allow_commands=True, home=store)
service.start()
code = (
    f"import os, time; again = os.path.exists({str(log)!r}); "
    f"open({str(log)!r}, 'a').write('start' + chr(10)); time.sleep(0 if again else 30)"
)
step = {"id": "long", "title": "long", "run": {"command": [sys.executable, "-c", code]}}
run_id = service.run({"id": "killed-by-exit", "name": "K", "steps": [step]}, {}, RunOptions())
print(run_id, flush=True)
deadline = time.monotonic() + 60
# the line written, not only the file made: `open` makes it before the step writes its line,
# and a kill in between left the first run's line unwritten (one "start" in all, as if the
# killed step had not run again)
while not (log.exists() and log.read_text()) and time.monotonic() < deadline:
    time.sleep(0.02)
durable.running().kill_in_flight()
time.sleep(1.0)
os._exit(0)
"""


def _workflow(project: Path, idempotent: bool) -> Path:
    log = project / "log"

    def step(name: str, code: str, **extra) -> dict:
        return {"id": name, "title": name, "run": {"command": [PY, "-c", code]}, **extra}

    wf = {
        "id": "crash",
        "name": "Crash",
        "steps": [
            step("first", f"open({str(log)!r}, 'a').write('first\\n')"),
            # the first attempt would sleep 30 s: it only ends if nobody stops the killed process's orphan
            step(
                "second",
                f"import time; first = 'second-start' not in open({str(log)!r}).read(); "
                f"open({str(log)!r}, 'a').write('second-start\\n'); time.sleep(30 if first else 0.2); "
                f"open({str(log)!r}, 'a').write('second-end\\n')",
                idempotent=idempotent,
            ),
            step("third", f"open({str(log)!r}, 'a').write('third\\n')"),
        ],
    }
    path = project / "crash.json"
    path.write_text(json.dumps(wf))
    return path


def _crash_mid_run(tmp_path: Path, idempotent: bool) -> tuple[Path, Path, str]:
    project = tmp_path / "project"
    project.mkdir()
    return _crash_when(tmp_path, _workflow(project, idempotent), project / "log", "second-start")


def _crash_when(tmp_path: Path, path: Path, log: Path, started: str) -> tuple[Path, Path, str]:
    """Run the workflow at ``path`` with the CLI; kill -9 it once ``log`` holds ``started``."""
    project, home = path.parent, tmp_path / "home"
    env = {**os.environ, "WORKRAIL_HOME": str(home)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from workrail_engine.cli import main; main()",
            "--project",
            str(project),
            "run",
            str(path),
        ],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while started not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    run_id = next(line.split()[1] for line in err.splitlines() if line.startswith("started "))
    return project, home / "runs", run_id


def _recover(
    project: Path, home: Path, run_id: str, allowed: str = "commands", wait: float = 60
) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", WAITER, str(project), str(home), run_id, allowed, str(wait)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_kill_9_then_restart_resumes_from_the_last_completed_step(tmp_path):
    project, home, run_id = _crash_mid_run(tmp_path, idempotent=True)
    result = _recover(project, home, run_id)
    assert result["status"] == "success", result
    lines = (project / "log").read_text().split()
    assert lines.count("first") == 1  # a completed step is not run again
    assert lines.count("second-start") == 2 and lines[-2:] == ["second-end", "third"]
    assert lines.count("second-end") == 1  # the killed attempt's orphan was stopped, never finished
    assert [r["step_name"] for r in result["step_results"]] == ["first", "second", "third"]


def test_kill_9_in_a_parallel_group_in_a_loop_resumes_the_right_iteration(tmp_path):
    """Members are keyed by their iteration path: after the crash the finished iterations are
    replayed from the journal and the rest run, each with its own iteration's values."""
    (tmp_path / "project").mkdir()
    marks = tmp_path / "marks"
    path = tmp_path / "project" / "loops.json"
    path.write_text(json.dumps(loop_of_groups(marks, "y")))
    project, home, run_id = _crash_when(tmp_path, path, marks, "left y")
    result = _recover(project, home, run_id)
    assert result["status"] == "success", result
    outputs = {r["step_name"]: r["output"]["stdout"] for r in result["step_results"]}
    assert outputs == LOOP_OUTPUTS
    lines = marks.read_text().splitlines()
    for done_before in ("left x", "right x"):
        assert lines.count(done_before) == 1, lines  # the first iteration was not run again
    assert lines.count("left y") == 2, lines  # killed mid-nap, so run again
    assert lines.count("left z") == 1 and lines.count("right z") == 1, lines


def test_kill_9_during_a_non_idempotent_step_marks_it_interrupted(tmp_path):
    project, home, run_id = _crash_mid_run(tmp_path, idempotent=False)
    result = _recover(project, home, run_id)
    assert result["status"] == "failed" and "interrupted" in result["error_message"]
    assert [r["status"] for r in result["step_results"]] == ["success", "interrupted"]
    lines = (project / "log").read_text().split()
    assert lines.count("second-start") == 1 and "third" not in lines and "second-end" not in lines


def test_a_process_not_allowed_to_run_commands_leaves_the_run_to_one_that_is(tmp_path):
    project, home, run_id = _crash_mid_run(tmp_path, idempotent=True)
    seen = _recover(project, home, run_id, allowed="no-commands", wait=3)
    assert seen["status"] == "running", (
        seen
    )  # not taken over (it would fail: commands are off there)
    assert (project / "log").read_text().split().count("second-start") == 1
    result = _recover(project, home, run_id)
    assert result["status"] == "success", result


AGENT_RUN = """
import json, sys, time
from pathlib import Path
from workrail_engine.runs import RunOptions, RunService
service = RunService(Path(sys.argv[1]), allow_commands=False, home=Path(sys.argv[2]))
service.start()
workflow = {"id": "ask", "name": "Ask", "steps": [
    {"id": "answer", "title": "Answer", "prompt": "Say something"},
    {"id": "again", "title": "Again", "prompt": "Say it again"}]}
run_id = service.run(workflow, {}, RunOptions())
print(run_id, service.wait(run_id, 30)["status"], flush=True)
time.sleep(120)
"""

CONTINUE_ELSEWHERE = """
import json, sys
from pathlib import Path
from workrail_engine.runs import RunService
# server=True: ends at once with the run still waiting, as an MCP server does
service = RunService(Path(sys.argv[1]), allow_commands=False, home=Path(sys.argv[2]), server=True)
service.start()
print(json.dumps(service.continue_run(sys.argv[3], "said", wait_seconds=30)))
"""


def test_a_run_of_prompt_steps_is_taken_over_by_a_process_without_commands(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    first = subprocess.Popen(
        [sys.executable, "-c", AGENT_RUN, str(project), str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run_id, status = first.stdout.readline().split()
        assert status == "waiting"
    finally:
        first.kill()  # kill -9 while the run waits for the agent
        first.communicate()
    out = subprocess.run(
        [sys.executable, "-c", CONTINUE_ELSEWHERE, str(project), str(home), run_id],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    after = json.loads(out.stdout)
    # The answer moved the run on: this process (no --allow-commands) took it over and runs it.
    assert after["outcome"] == "accepted" and after["status"] == "waiting", after
    assert after["waiting"]["step"]["id"] == "again"
    assert [r["step_name"] for r in after["step_results"]] == ["answer"]


FAILED_LAUNCH = """
import json, sys
from pathlib import Path
from workrail_engine.runs import RunOptions, RunService, durable
project, home = Path(sys.argv[1]), Path(sys.argv[2])
unreachable = RunService(
    project, allow_commands=True, home=home, database=f"sqlite:///{home}/no-such-directory/store.db"
)
try:
    unreachable.start()
except Exception as exc:
    failed = type(exc).__name__
else:
    failed = None
left = {
    "failed": failed,
    "current": durable.running() is not None,
    "lock_files": sorted(p.name for p in (home / "executors").glob("*.lock")),
}
service = RunService(project, allow_commands=True, home=home)
service.start()
run_id = service.run(json.loads(sys.argv[3]), {}, RunOptions())
print(json.dumps({**left, "status": service.wait(run_id, 60)["status"]}))
"""


def test_a_failed_launch_leaves_nothing_open_and_the_next_one_works(tmp_path):
    """The store is current while DBOS starts (what it runs during the launch needs it): a launch
    that fails is no longer current, holds no executor lock, and the process can launch again."""
    project = tmp_path / "project"
    project.mkdir()
    workflow = {
        "id": "after-a-failed-launch",
        "name": "again",
        "steps": [{"id": "one", "title": "one", "run": {"command": [sys.executable, "-c", "1"]}}],
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            FAILED_LAUNCH,
            str(project),
            str(tmp_path / "home"),
            json.dumps(workflow),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "WORKRAIL_DATABASE_URL"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    left = json.loads(done.stdout)
    assert left["failed"] is not None, "a launch on a store it cannot open should fail"
    assert left == {**left, "current": False, "lock_files": [], "status": "success"}, left


def test_a_step_killed_by_the_exit_of_its_process_is_not_recorded_and_runs_again(tmp_path):
    """A server (or `workrail run`) that exits with a step in flight kills the step's processes
    just before `os._exit`; the run's thread, woken by the kill, used to record the step as failed
    in that moment, so a server ending mid-step now and then left a failed run. The journal is
    frozen before the kill: nothing is recorded, and the next process runs the step again."""
    project, store, log = tmp_path / "project", tmp_path / "store", tmp_path / "log"
    project.mkdir()
    first = subprocess.run(
        [sys.executable, "-c", KILLED_BY_EXIT, str(project), str(store), str(log)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    run_id = first.stdout.strip()
    resumed = subprocess.run(
        [sys.executable, "-c", WAITER, str(project), str(store), run_id, "commands", "60"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    run = json.loads(resumed.stdout)
    assert run["status"] == "success", (run, resumed.stderr)
    assert log.read_text().splitlines() == ["start", "start"]  # the killed step ran again


def test_a_run_stored_with_whole_outcomes_beside_its_results_recovers_and_replays(tmp_path):
    """A store written before an attempt's outcome was kept beside its step's result without what
    the result says, and before the run's input held its definition as text: the run resumes from
    those rows, `workrail replay` walks them, and `workrail runs show` reads them."""
    project, home, run_id = _crash_mid_run(tmp_path, idempotent=True)
    store = sqlite3.connect(home / DATABASE)
    ((table, stored),) = [
        (table, found[0][0])
        for table in ("workflow_input", "workflow_status")
        for found in [
            store.execute(
                f"SELECT inputs FROM {table} WHERE workflow_uuid = ? AND inputs IS NOT NULL",
                (run_id,),
            ).fetchall()
        ]
        if found
    ]
    inputs = json.loads(stored)
    run = inputs["positionalArgs"][0]
    assert run["workflow"] == {"id": "crash", "name": "Crash"}  # the shape written now
    run["workflow"] = json.loads(run.pop("workflow_text"))
    store.execute(
        f"UPDATE {table} SET inputs = ? WHERE workflow_uuid = ?", (json.dumps(inputs), run_id)
    )
    ((outcome, result),) = store.execute(
        "SELECT outcome, result FROM workrail_journal WHERE run_id = ? AND step_key = 'first'",
        (run_id,),
    ).fetchall()
    beside, first = json.loads(outcome), json.loads(result)
    assert "status" not in beside and "output" not in beside  # the shape written now
    whole = {
        "status": first["status"],
        "output": first["output"],
        "duration": first["duration"],
        "finished_at": beside["finished_at"],
    }
    store.execute(
        "UPDATE workrail_journal SET outcome = ? WHERE run_id = ? AND step_key = 'first'",
        (json.dumps(whole), run_id),
    )
    store.commit()
    store.close()

    result = _recover(project, home, run_id)
    assert result["status"] == "success", result
    assert (project / "log").read_text().split().count("first") == 1  # not run again

    def workrail(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", "from workrail_engine.cli import main; main()", *args],
            cwd=project,
            env={**os.environ, "WORKRAIL_HOME": str(home.parent)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    histories = json.loads(workrail("replay", "--format", "json", str(project / "crash.json")))
    assert [(h["id"], h["holds"], h["stepsReplayed"]) for h in histories["histories"]] == [
        (run_id, True, 3)
    ]
    shown_by = {"run-status": workrail("run-status", run_id), "runs": workrail("runs")}
    # the definition read back: its three steps, its id
    assert f"{run_id}: success — 3/3 steps" in shown_by["run-status"]
    assert [line.split()[-1] for line in shown_by["runs"].splitlines() if run_id in line] == [
        "crash"
    ]
