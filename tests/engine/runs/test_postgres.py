"""The Postgres configuration against a real PostgreSQL server started here on loopback.

Two worker processes share one store and one queue: a parallel group of 12 steps with
parallel_limit 3 runs on both, and never more than 3 at once (from the steps' own timestamps).
Two workers with homes of their own (two machines, as far as the store can tell): the run of one
killed with ``kill -9`` is taken over by the other, from its last completed step.
The server comes from the Debian package ``postgresql`` (installed by .ci/run); without it this
test fails, it does not skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from runs_support import LOOP_OUTPUTS, loop_of_groups

from workrail_engine.runs.journal import Journal

pytestmark = pytest.mark.slow

WORKER = """
import json, os, sys, time
from pathlib import Path
from workrail_engine.runs import RunOptions, RunService
if os.environ.get("TEST_SLOW_LAUNCH"):
    # a launch that goes on for a while once the member queue listens, as on a loaded machine
    from workrail_engine.runs.member_queue import MemberQueue
    begin = MemberQueue.start
    def slow_start(self):
        begin(self)
        time.sleep(float(os.environ["TEST_SLOW_LAUNCH"]))
    MemberQueue.start = slow_start
service = RunService(
    Path(sys.argv[1]), allow_commands=sys.argv[3] not in ("status", "cancel"), home=Path(sys.argv[2])
)
service.start()
if sys.argv[3] == "serve":
    print("ready", flush=True)
    time.sleep(float(sys.argv[4]))
elif sys.argv[3] == "start":
    run_id = service.run(json.loads(sys.argv[4]), {}, RunOptions())
    print(run_id, flush=True)
    time.sleep(120)
elif sys.argv[3] == "status":
    print(json.dumps(service.wait(sys.argv[4], 60)))
elif sys.argv[3] == "cancel":
    service.cancel(sys.argv[4], "the test cancels it")
    print(json.dumps(service.wait(sys.argv[4], 60)))
else:
    workflow = json.loads(sys.argv[4])
    run_id = service.run(workflow, {}, RunOptions(parallel_limit=3))
    print(json.dumps(service.wait(run_id, 120)))
"""

STEP = (
    "import json, os, time; t = time.time(); time.sleep(1.0); "
    "print(json.dumps({'start': t, 'end': time.time(), 'worker': os.getppid()}))"
)


def test_two_workers_share_the_queue_and_the_limit(postgres_url, tmp_path):
    env = {**os.environ, "WORKRAIL_DATABASE_URL": postgres_url}
    project = tmp_path / "project"
    project.mkdir()
    homes = [tmp_path / "home-a", tmp_path / "home-b"]
    members = [
        {"id": f"step-{i}", "title": f"step {i}", "run": {"command": [sys.executable, "-c", STEP]}}
        for i in range(12)
    ]
    workflow = {
        "id": "pg-flow",
        "name": "pg",
        "steps": [{"id": "group", "title": "g", "type": "parallel", "steps": members}],
    }
    helper = _start_worker(env, project, homes[1], "serve", "60")
    try:
        assert helper.stdout.readline().strip() == "ready", helper.stderr.read()
        time.sleep(1.5)  # the helper lists the queues once a second
        result = _worker_answer(env, project, homes[0], "run", json.dumps(workflow))
    finally:
        helper.kill()
        helper.communicate()
    assert result["status"] == "success", json.dumps(result, indent=1)[:3000]
    outputs = [r["output"]["stdout"] for r in result["step_results"]]
    events = sorted([(o["start"], 1) for o in outputs] + [(o["end"], -1) for o in outputs])
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    assert peak == 3
    assert len({o["worker"] for o in outputs}) == 2, "both worker processes should have run steps"


def test_a_cancel_by_dbos_itself_is_heard_before_the_next_step_starts(postgres_url, tmp_path):
    """A sequential run of short steps in one process, cancelled from another by DBOS's own client
    (not through this engine): the run's journal hears the cancel with its commit (the status
    table's trigger announces it; the run's status is no longer read with every result), so at
    most the step under way and the next one end after it — where the cancel watch alone, polling
    four times a second, lets about fifteen more marks be made."""
    from dbos import DBOSClient

    env = {**os.environ, "WORKRAIL_DATABASE_URL": postgres_url}
    project = tmp_path / "project"
    marks = project / "m"  # (the steps run in the project: short paths, the workflow an argv)
    marks.mkdir(parents=True)
    steps = []
    for i in range(600):  # a mark, then a hundredth of a second: ≈ 15 ms a pair
        steps.append({"id": f"t{i}", "run": {"command": ["touch", f"m/{i}"]}})
        steps.append({"id": f"w{i}", "run": {"command": ["sleep", "0.01"]}})
    workflow = {"id": "pg-cancel-heard", "name": "pg", "steps": steps}
    runner = _start_worker(env, project, tmp_path / "home-a", "start", json.dumps(workflow))
    client = DBOSClient(system_database_url=postgres_url)
    try:
        run_id = runner.stdout.readline().strip()
        assert run_id.startswith("wf-"), runner.stderr.read()
        deadline = time.monotonic() + 60
        while len(list(marks.iterdir())) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        client.cancel_workflow(run_id)
        at_cancel = len(list(marks.iterdir()))
        time.sleep(1.0)  # a step started after the cancel would show now
        after = len(list(marks.iterdir()))
        result = _worker_answer(env, project, tmp_path / "home-b", "status", run_id)
    finally:
        client.destroy()
        runner.kill()
        runner.communicate()
    assert result["status"] == "cancelled", json.dumps(result, indent=1)[:3000]
    assert 20 <= at_cancel < 600
    assert after - at_cancel <= 1, (at_cancel, after)
    with psycopg.connect(postgres_url) as conn:
        triggers = conn.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'workrail_announce_cancel%%'"
            " AND tgrelid = 'dbos.workflow_status'::regclass"
        ).fetchone()
    assert triggers == (1,)


def test_a_cancel_from_another_process_ends_a_run_waiting_for_its_queued_members(
    postgres_url, tmp_path
):
    """The run waits for its members by reading the journal, not through DBOS calls that would
    raise on a cancel: it must still end cancelled, its members' processes killed."""
    env = {**os.environ, "WORKRAIL_DATABASE_URL": postgres_url}
    project = tmp_path / "project"
    project.mkdir()
    marks = tmp_path / "marks"
    token = f"nap-{uuid.uuid4().hex}"
    nap = f"open({str(marks)!r}, 'a').write('x\\n'); import time; time.sleep(60)  # {token}"
    workflow = {
        "id": "pg-cancel",
        "name": "pg",
        "steps": [
            {
                "id": "group",
                "title": "g",
                "type": "parallel",
                "steps": [
                    {
                        "id": f"nap-{i}",
                        "title": "nap",
                        "run": {"command": [sys.executable, "-c", nap]},
                    }
                    for i in range(4)
                ],
            },
            _step("after", _mark(marks, "after")),
        ],
    }
    runner = _start_worker(env, project, tmp_path / "home-a", "start", json.dumps(workflow))
    try:
        run_id = runner.stdout.readline().strip()
        assert run_id.startswith("wf-"), runner.stderr.read()
        deadline = time.monotonic() + 60
        while not (marks.exists() and marks.read_text().count("x") == 4):
            assert time.monotonic() < deadline, "the members did not all start"
            time.sleep(0.05)
        cancelled_at = time.monotonic()
        result = _worker_answer(env, project, tmp_path / "home-b", "cancel", run_id)
        while _processes_with(nap) and time.monotonic() < cancelled_at + 20:
            time.sleep(0.1)
        assert _processes_with(nap) == []
        assert result["status"] == "cancelled", json.dumps(result, indent=1)[:3000]
        assert time.monotonic() - cancelled_at < 30
        assert "after" not in marks.read_text()
    finally:
        runner.kill()
        runner.communicate()
        for pid in _processes_with(nap):
            os.kill(pid, 9)


def _processes_with(code: str) -> list[int]:
    """The processes running ``python -c <code>`` (not the worker whose arguments hold it)."""
    argument = b"\0-c\0" + code.encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and argument in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
        except OSError:
            pass
    return found


def _takeover_setting(url: str, tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """Workers' environment (dead executors found within a second), project, marks file."""
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "WORKRAIL_DATABASE_URL": url, "WORKRAIL_LIVENESS_INTERVAL": "1"}
    return env, project, tmp_path / "marks"


def _mark(path: Path, word: str) -> list[str]:
    return [sys.executable, "-c", f"open({str(path)!r}, 'a').write({word!r} + '\\n')"]


def _step(step_id: str, command: list[str]) -> dict:
    """A command step titled by its id."""
    return {"id": step_id, "title": step_id, "run": {"command": command}}


def test_the_run_of_a_killed_worker_is_taken_over_by_a_worker_elsewhere(postgres_url, tmp_path):
    env, project, marks = _takeover_setting(postgres_url, tmp_path)
    workflow = {
        "id": "pg-recovery",
        "name": "pg",
        "steps": [
            _step("one", _mark(marks, "one")),
            _step("nap", [sys.executable, "-c", "import time; time.sleep(3)"]),
            _step("three", _mark(marks, "three")),
        ],
    }
    other = _start_worker(env, project, tmp_path / "home-b", "serve", "90")
    doomed = _start_worker(env, project, tmp_path / "home-a", "start", json.dumps(workflow))
    try:
        assert other.stdout.readline().strip() == "ready", other.stderr.read()
        run_id = doomed.stdout.readline().strip()
        assert run_id.startswith("wf-"), doomed.stderr.read()
        deadline = time.monotonic() + 30
        while not marks.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the nap is running in the doomed worker
        doomed.kill()  # kill -9
        doomed.wait()
        killed_at = time.monotonic()
        result = _worker_answer(env, project, tmp_path / "home-c", "status", run_id)
    finally:
        for worker in (doomed, other):
            worker.kill()
            worker.communicate()
    assert result["status"] == "success", json.dumps(result, indent=1)[:3000]
    assert time.monotonic() - killed_at < 30
    assert marks.read_text() == "one\nthree\n"  # "one" was not run again
    assert [r["step_name"] for r in result["step_results"]] == ["one", "nap", "three"]


def test_a_worker_killed_with_a_result_in_flight_starts_no_step_and_its_run_resumes_after_it(
    postgres_url, tmp_path
):
    """The server holds step one's result (a lock on the journal) while the worker waits for its
    answer: step two does not start. The worker is killed with ``kill -9`` and the lock goes; a
    worker taking the run over finishes it, step two once."""
    env, project, marks = _takeover_setting(postgres_url, tmp_path)
    workflow = {
        "id": "pg-in-flight",
        "name": "pg",
        "steps": [
            # zero's result prepares the journal's statement on the worker's connection (a
            # statement prepared under the lock would wait in its preparation, not its answer)
            _step("zero", _mark(marks, "zero")),
            _step(
                "one",
                [
                    sys.executable,
                    "-c",
                    f"open({str(marks)!r}, 'a').write('one\\n'); import time; time.sleep(1.5)",
                ],
            ),
            _step("two", _mark(marks, "two")),
        ],
    }
    Journal(postgres_url).close()  # its tables, for the lock below
    doomed = other = None
    with (
        psycopg.connect(postgres_url) as blocker,
        psycopg.connect(postgres_url, autocommit=True) as watcher,
    ):
        try:
            doomed = _start_worker(env, project, tmp_path / "home-a", "start", json.dumps(workflow))
            run_id = doomed.stdout.readline().strip()
            assert run_id.startswith("wf-"), doomed.stderr.read()
            deadline = time.monotonic() + 60
            while "one" not in (marks.read_text() if marks.exists() else ""):
                assert time.monotonic() < deadline, "step one did not start"
                time.sleep(0.02)
            blocker.execute("LOCK TABLE workrail.journal IN SHARE ROW EXCLUSIVE MODE")
            while not watcher.execute(
                "SELECT 1 FROM pg_stat_activity WHERE application_name = 'workrail-journal'"
                " AND wait_event_type = 'Lock' AND datname = current_database()"
            ).fetchall():
                assert time.monotonic() < deadline, "step one's result never reached the server"
                time.sleep(0.05)
            time.sleep(1.0)  # time enough for step two to start, were it not waiting
            assert marks.read_text() == "zero\none\n"
            doomed.kill()  # kill -9
            doomed.wait()
            blocker.commit()
            other = _start_worker(env, project, tmp_path / "home-b", "serve", "90")
            assert other.stdout.readline().strip() == "ready", other.stderr.read()
            result = _worker_answer(env, project, tmp_path / "home-c", "status", run_id)
        finally:
            for worker in (doomed, other):
                if worker is not None:
                    worker.kill()
                    worker.communicate()
    assert result["status"] == "success", json.dumps(result, indent=1)[:3000]
    # The write of step one may die with its session (Postgres 15 rolled it back here: the
    # session was gone before the statement's Sync): step one then runs again, as a crash
    # during the step would make it; step two runs once, after it.
    assert marks.read_text() in ("zero\none\ntwo\n", "zero\none\none\ntwo\n")
    assert [r["step_name"] for r in result["step_results"]] == ["zero", "one", "two"]


def test_a_parallel_group_in_a_loop_runs_at_every_iteration_across_a_takeover(
    postgres_url, tmp_path
):
    """Members are keyed by the iteration path: each iteration's members run on the queue and
    record their own outcome, and the worker taking over a killed one's run replays the
    finished iterations from the journal, never another iteration's outcome."""
    env, project, marks = _takeover_setting(postgres_url, tmp_path)
    workflow = loop_of_groups(marks, "y")
    other = _start_worker(env, project, tmp_path / "home-b", "serve", "90")
    doomed = None
    try:
        # Ready before the run starts, so that both workers share the run's members (a worker
        # still starting: test_a_worker_still_starting_runs_the_members_queued_for_it).
        assert other.stdout.readline().strip() == "ready", other.stderr.read()
        doomed = _start_worker(env, project, tmp_path / "home-a", "start", json.dumps(workflow))
        run_id = doomed.stdout.readline().strip()
        assert run_id.startswith("wf-"), doomed.stderr.read()
        deadline = time.monotonic() + 60
        while "left y" not in (marks.read_text() if marks.exists() else ""):
            assert time.monotonic() < deadline, "the run did not reach its second iteration"
            time.sleep(0.05)
        doomed.kill()  # kill -9, whichever worker runs the napping member
        doomed.wait()
        result = _worker_answer(env, project, tmp_path / "home-c", "status", run_id)
    finally:
        for worker in (doomed, other):
            if worker is not None:
                worker.kill()
                worker.communicate()
    assert result["status"] == "success", json.dumps(result, indent=1)[:3000]
    outputs = {r["step_name"]: r["output"]["stdout"] for r in result["step_results"]}
    assert outputs == LOOP_OUTPUTS
    lines = marks.read_text().splitlines()
    for done_before in ("left x", "right x"):
        assert lines.count(done_before) == 1, lines  # the first iteration was not run again
    assert {"left z", "right z"} <= set(lines)


def test_a_run_goes_on_through_a_restart_of_the_database_server(postgres_server, tmp_path):
    env = {**os.environ, "WORKRAIL_DATABASE_URL": postgres_server.url}
    project = tmp_path / "project"
    project.mkdir()
    workflow = {
        "id": "pg-restart",
        "name": "pg",
        "steps": [
            {
                "id": f"nap-{i}",
                "title": "nap",
                "run": {"command": [sys.executable, "-c", "import time; time.sleep(0.4)"]},
            }
            for i in range(8)
        ],
    }
    runner = _start_worker(env, project, tmp_path / "home", "run", json.dumps(workflow))
    try:
        _wait_for_a_recorded_step(postgres_server.url)  # the run is under way (DBOS launched)
        postgres_server.restart()  # every session ends: the journal's, DBOS's, the liveness lock's
        out, err = runner.communicate(timeout=120)
    finally:
        runner.kill()
    assert runner.returncode == 0, err
    result = json.loads(out)
    assert result["status"] == "success", result
    assert [r["step_name"] for r in result["step_results"]] == [f"nap-{i}" for i in range(8)]


def test_a_parallel_group_goes_on_through_a_restart_of_the_database_server(
    postgres_server, tmp_path
):
    """The member queue's listening connection ends with the restart: the process connects again
    and takes the members queued while it was away (their notification was lost with it)."""
    env = {**os.environ, "WORKRAIL_DATABASE_URL": postgres_server.url}
    project = tmp_path / "project"
    project.mkdir()
    members = [
        {
            "id": f"group-nap-{i}",
            "title": "nap",
            "run": {"command": [sys.executable, "-c", "import time; time.sleep(1.0)"]},
        }
        for i in range(8)
    ]
    # 4 s of members: the restart (1–2 s on a loaded machine) lands in the middle of the group
    workflow = {
        "id": "pg-restart-group",
        "name": "pg",
        "steps": [
            {"id": "group", "title": "g", "type": "parallel", "parallelLimit": 2, "steps": members}
        ],
    }
    runner = _start_worker(env, project, tmp_path / "home", "run", json.dumps(workflow))
    try:
        _wait_for_a_recorded_step(postgres_server.url, "group-nap-")  # the group is under way
        postgres_server.restart()  # every session ends, the member queue's listener's too
        out, err = runner.communicate(timeout=120)
    finally:
        runner.kill()
    assert runner.returncode == 0, err
    result = json.loads(out)
    assert result["status"] == "success", result
    assert sorted(r["step_name"] for r in result["step_results"]) == [
        f"group-nap-{i}" for i in range(8)
    ]
    assert "the member queue's connection was lost" in err  # the restart reached the listener


def _worker_argv(project: Path, home: Path, mode: str, argument: str) -> list[str]:
    return [sys.executable, "-c", WORKER, str(project), str(home), mode, argument]


def _start_worker(
    env: dict[str, str], project: Path, home: Path, mode: str, argument: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _worker_argv(project, home, mode, argument),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _worker_answer(env: dict[str, str], project: Path, home: Path, mode: str, argument: str):
    """What a worker that runs to its end prints (a run's or a status's JSON)."""
    done = subprocess.run(
        _worker_argv(project, home, mode, argument),
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _wait_for_a_recorded_step(url: str, prefix: str = "") -> None:
    """Until the journal holds a step's result (a fixed sleep restarted the server during DBOS's
    launch on a loaded machine, which DBOS does not retry), of a step whose key starts with
    ``prefix`` (the server is shared by the module's tests)."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                if conn.execute(
                    "SELECT 1 FROM workrail.journal WHERE result IS NOT NULL"
                    " AND starts_with(step_key, %s) LIMIT 1",
                    (prefix,),
                ).fetchone():
                    return
        except psycopg.Error:  # the journal's table is not there yet
            pass
        time.sleep(0.1)
    raise AssertionError("no step of the run was recorded within 60 s")


def test_a_worker_still_starting_runs_the_members_queued_for_it(postgres_url, tmp_path):
    """A worker takes members from the member queue as soon as it listens to it: the run store
    must already be open then (it failed them with NotLaunched while the rest of its launch went
    on). Members wait on the queue with no worker able to run them — their worker was
    killed, and the process that handed them back runs no commands — when a worker starts; the
    test does not wait for it to be ready, and the worker's launch goes on for 1.5 s after it
    started listening (what a slow Postgres connection or a loaded machine does to the
    rest of its launch; without it the race was too narrow to hit here 0 times in 3)."""
    env, project, marks = _takeover_setting(postgres_url, tmp_path)
    token = uuid.uuid4().hex
    members = [
        {
            "id": f"member-{i}",
            "title": "member",
            "run": {
                "command": [
                    sys.executable,
                    "-c",
                    f"open({str(marks)!r}, 'a').write('{i}\\n'); import time; time.sleep(1.5)"
                    f"  # {token}",
                ]
            },
        }
        for i in range(4)
    ]
    workflow = {
        "id": "pg-queued-at-launch",
        "name": "pg",
        "steps": [{"id": "group", "title": "g", "type": "parallel", "steps": members}],
    }
    doomed = _start_worker(env, project, tmp_path / "home-a", "start", json.dumps(workflow))
    watcher = newcomer = None
    try:
        run_id = _kill_once_members_started(doomed, marks, 4)
        # It runs no commands: it hands the dead worker's members back to a queue, where they
        # wait for a worker that does.
        watcher = _start_worker(env, project, tmp_path / "home-c", "status", run_id)
        _wait_for_queued_members(postgres_url, run_id, 4)
        newcomer = _start_worker(
            {**env, "TEST_SLOW_LAUNCH": "1.5"}, project, tmp_path / "home-b", "serve", "90"
        )
        out, err = watcher.communicate(timeout=120)
        assert watcher.returncode == 0, err
        result = json.loads(out)
        errors = _member_errors(postgres_url, run_id)
    finally:
        for worker in (doomed, watcher, newcomer):
            if worker is not None:
                worker.kill()
                worker.communicate()
        for pid in _processes_with(members[0]["run"]["command"][2]):
            os.kill(pid, 9)
    assert errors == [], errors
    assert result["status"] == "success", json.dumps(result, indent=1)[:3000]
    assert sorted(r["step_name"] for r in result["step_results"]) == [
        f"member-{i}" for i in range(4)
    ]


def _kill_once_members_started(doomed: subprocess.Popen, marks: Path, count: int) -> str:
    """The id of the run the worker ``doomed`` started, once ``count`` of its members have
    written their mark; the worker is killed (kill -9) while they run."""
    run_id = doomed.stdout.readline().strip()
    assert run_id.startswith("wf-"), doomed.stderr.read()
    deadline = time.monotonic() + 60
    while len(marks.read_text().splitlines() if marks.exists() else []) < count:
        assert time.monotonic() < deadline, "the members did not all start"
        time.sleep(0.05)
    doomed.kill()
    doomed.wait()
    return run_id


def _wait_for_queued_members(url: str, run_id: str, count: int) -> None:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM workrail.members WHERE run_id = %s AND state = 'queued'",
                (run_id,),
            ).fetchone()
        if row and row[0] >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{count} members of {run_id} were not queued within 60 s")


def _member_errors(url: str, run_id: str) -> list[str]:
    """The run's members that ended in an error on the member queue."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [
            str(row[0])
            for row in conn.execute(
                "SELECT step_key || ': ' || coalesce(error, state) FROM workrail.members"
                " WHERE run_id = %s AND state NOT IN ('queued', 'claimed', 'ended')",
                (run_id,),
            ).fetchall()
        ]


def _member_states(url: str, run_id: str) -> list[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT state FROM workrail.members WHERE run_id = %s ORDER BY step_key", (run_id,)
        ).fetchall()
    return [str(row[0]) for row in rows]


def _napping_group(marks: Path, token: str, count: int, seconds: float) -> list[dict]:
    code = f"open({str(marks)!r}, 'a').write('x\\n'); import time; time.sleep({seconds})  # {token}"
    return [
        {"id": f"nap-{i}", "title": "nap", "run": {"command": [sys.executable, "-c", code]}}
        for i in range(count)
    ]


def test_a_cancel_reaches_the_members_waiting_on_the_queue(postgres_url, tmp_path):
    """Members wait on the member queue with no process to take them (their worker was killed,
    and the process that queued them again runs no commands) when the run is cancelled: the
    worker that takes them afterwards starts none of their steps, and leaves none queued."""
    env, project, marks = _takeover_setting(postgres_url, tmp_path)
    token = uuid.uuid4().hex
    members = _napping_group(marks, token, 3, 60)
    workflow = {
        "id": "pg-cancel-queued",
        "name": "pg",
        "steps": [{"id": "group", "title": "g", "type": "parallel", "steps": members}],
    }
    doomed = _start_worker(env, project, tmp_path / "home-a", "start", json.dumps(workflow))
    watcher = newcomer = None
    try:
        run_id = _kill_once_members_started(doomed, marks, 3)
        watcher = _start_worker(env, project, tmp_path / "home-c", "status", run_id)
        _wait_for_queued_members(postgres_url, run_id, 3)
        result = _worker_answer(env, project, tmp_path / "home-d", "cancel", run_id)
        assert result["status"] == "cancelled", json.dumps(result, indent=1)[:3000]
        newcomer = _start_worker(env, project, tmp_path / "home-b", "serve", "60")
        assert newcomer.stdout.readline().strip() == "ready", newcomer.stderr.read()
        deadline = time.monotonic() + 30
        while _member_states(postgres_url, run_id) != ["cancelled"] * 3:
            assert time.monotonic() < deadline, _member_states(postgres_url, run_id)
            time.sleep(0.1)
    finally:
        for worker in (doomed, watcher, newcomer):
            if worker is not None:
                worker.kill()
                worker.communicate()
        for pid in _processes_with(members[0]["run"]["command"][2]):
            os.kill(pid, 9)
    assert len(marks.read_text().splitlines()) == 3  # no member started again after the cancel
