"""Runs end to end on the real durable layer (DBOS on SQLite) with real subprocesses."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from runs_support import command, py, workflow
from system_packages import require

from workrail_engine.errors import InvalidParams, RunNotFound
from workrail_engine.runs import RunOptions

STAMP = "import json, time, os; t = time.time(); time.sleep({secs}); print(json.dumps([t, time.time()]))"


def finish(service, wf, parameters=None, wait=60, **options):
    run_id = service.run(wf, parameters or {}, RunOptions(**options))
    return service.wait(run_id, wait)


def max_overlap(intervals):
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    current = peak = 0
    for _, delta in events:
        current += delta
        peak = max(peak, current)
    return peak


def test_parallel_limit_caps_concurrency(service):
    members = [command(f"p{i}", py(STAMP.format(secs=0.6))) for i in range(6)]
    result = finish(
        service,
        workflow({"id": "group", "title": "g", "type": "parallel", "steps": members}),
        parallel_limit=2,
    )
    assert result["status"] == "success", result
    intervals = [r["output"]["stdout"] for r in result["step_results"]]
    assert max_overlap(intervals) == 2


def test_retry_counts_the_first_attempt(service, tmp_path):
    counter = tmp_path / "count"
    flaky = py(
        f"import sys; p = {str(counter)!r}; n = len(open(p).read()) if __import__('os').path.exists(p) else 0; "
        f"open(p, 'a').write('x'); sys.exit(0 if n + 1 >= 3 else 1)"
    )
    ok = finish(
        service,
        workflow(
            command("flaky", flaky, retry={"maxAttempts": 3, "delaySeconds": 0.1, "backoff": 2})
        ),
    )
    assert ok["status"] == "success" and ok["step_results"][0]["attempts"] == 3
    assert counter.read_text() == "xxx"
    counter.unlink()
    failed = finish(
        service, workflow(command("flaky", flaky, retry={"maxAttempts": 2, "delaySeconds": 0.1}))
    )
    assert failed["status"] == "failed" and failed["step_results"][0]["attempts"] == 2
    assert counter.read_text() == "xx"


def test_on_failure_continue_gives_partial_and_abort_stops(service):
    fail = py("import sys; sys.exit(2)")
    partial = finish(
        service, workflow(command("bad", fail, onFailure="continue"), command("after", ["true"]))
    )
    assert partial["status"] == "partial"
    assert [r["status"] for r in partial["step_results"]] == ["failed", "success"]
    aborted = finish(service, workflow(command("bad", fail), command("after", ["true"])))
    assert aborted["status"] == "failed" and "bad" in aborted["error_message"]
    assert [r["step_name"] for r in aborted["step_results"]] == ["bad"]


def test_overall_timeout_aborts_and_kills(service):
    started = time.monotonic()
    result = finish(
        service, workflow(command("slow", py("import time; time.sleep(30)"))), timeout=1
    )
    assert result["status"] == "failed" and "timeout" in result["error_message"]
    assert time.monotonic() - started < 10


def test_cancel_stops_processes_within_five_seconds(service, tmp_path):
    pidfile = tmp_path / "pid"
    wf = workflow(
        command("quick", ["true"]),
        command(
            "long",
            py(
                f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
            ),
        ),
    )
    run_id = service.run(wf, {}, RunOptions())
    deadline = time.monotonic() + 20
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    cancelled_at = time.monotonic()
    answer = service.cancel(run_id, "test")
    assert answer["status"] == "cancelled" and answer["steps_completed"] == 1
    while time.monotonic() - cancelled_at < 5:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the step's process survived the cancel for 5 s")
    assert service.get(run_id)["status"] == "cancelled"


def test_cancel_records_every_step_that_completed(service, tmp_path):
    """Each step leaves a file; after a cancel mid-run, every file's step is in the results, and
    no step started after the cancel (each step's result is stored as it ends)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    wf = workflow(*(command(f"s{i}", ["touch", str(marks / f"s{i}")]) for i in range(400)))
    run_id = service.run(wf, {}, RunOptions())
    deadline = time.monotonic() + 20
    while len(list(marks.iterdir())) < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    answer = service.cancel(run_id, "enough")
    time.sleep(0.5)  # anything still going would show up now
    result = service.get(run_id)
    assert result["status"] == "cancelled"
    touched = {p.name for p in marks.iterdir()}
    succeeded = {r["step_name"] for r in result["step_results"] if r["status"] == "success"}
    assert 20 <= len(touched) < 400
    assert (
        succeeded <= touched and len(touched - succeeded) <= 1
    )  # at most the one the cancel cut short
    assert answer["steps_completed"] <= len(succeeded) <= answer["steps_completed"] + 1


def test_cancel_ends_a_retry_delay_at_once(service):
    def live_run_ids() -> list[str]:
        return list(service.runtime.progress.live)

    wf = workflow(
        command(
            "flaky", py("import sys; sys.exit(1)"), retry={"maxAttempts": 3, "delaySeconds": 30}
        )
    )
    run_id = service.run(wf, {}, RunOptions())
    time.sleep(1.5)  # the first attempt has failed by now: the run waits 30 s before the second
    assert run_id in live_run_ids()
    started = time.monotonic()
    service.cancel(run_id)
    while run_id in live_run_ids() and time.monotonic() - started < 5:
        time.sleep(0.05)
    assert run_id not in live_run_ids(), "the run's thread still sleeps after the cancel"
    assert service.get(run_id)["status"] == "cancelled"


def test_conditions_templates_and_loops(service):
    wf = workflow(
        command("emit", py("import json; print(json.dumps({'n': 2}))")),
        command("only-big", ["echo", "big"], runCondition={"var": "size", "equals": "big"}),
        command(
            "uses-output", ["echo", "n={{steps.emit.output.stdout.n}} for {{parameters.size}}"]
        ),
        {
            "id": "each",
            "title": "each",
            "type": "loop",
            "loop": {"type": "forEach", "items": "files", "itemVar": "file"},
            "body": [command("show", ["echo", "{{context.file}}"])],
        },
        parameters={
            "type": "object",
            "properties": {"size": {"type": "string"}, "files": {"type": "array"}},
        },
    )
    result = finish(service, wf, {"size": "small", "files": ["a.py", "b.py"]})
    assert result["status"] == "success", result
    by_name = {r["step_name"]: r for r in result["step_results"]}
    assert by_name["only-big"]["status"] == "skipped"
    assert by_name["uses-output"]["output"]["stdout"] == "n=2 for small\n"
    assert [by_name[f"show[{i}]"]["output"]["stdout"] for i in (1, 2)] == ["a.py\n", "b.py\n"]


def test_secret_is_masked_in_outputs_and_absent_from_the_database(service, run_home, monkeypatch):
    secret = "hunter2-" + os.urandom(6).hex()
    marker = "visible-" + os.urandom(6).hex()
    monkeypatch.setenv("DEPLOY_TOKEN", secret)
    wf = workflow(
        command(
            "leak",
            py(
                f"import os, sys; print(os.environ['DEPLOY_TOKEN'], sys.argv[1], {marker!r}); "
                "print(os.environ['DEPLOY_TOKEN'], file=sys.stderr)"
            )
            + ["{{secrets.DEPLOY_TOKEN}}"],
        ),
        command(
            "fail",
            py("import os, sys; print(os.environ['DEPLOY_TOKEN']); sys.exit(1)"),
            onFailure="continue",
        ),
        secrets=["DEPLOY_TOKEN"],
    )
    result = finish(service, wf)
    text = json.dumps(result)
    assert secret not in text and "***" in text and marker in text
    assert result["step_results"][0]["output"]["stdout"].startswith("*** ***")
    database = b"".join(p.read_bytes() for p in run_home.rglob("runs.sqlite*"))
    assert marker.encode() in database  # the check below can fail: outputs are stored readable
    assert secret.encode() not in database


def test_parameters_are_checked_first_with_every_problem(service):
    wf = workflow(
        command("x", ["true"]),
        parameters={
            "type": "object",
            "required": ["target"],
            "properties": {"target": {"type": "string"}, "count": {"type": "integer"}},
        },
    )
    with pytest.raises(InvalidParams) as caught:
        service.run(wf, {"count": "many"}, RunOptions())
    problems = caught.value.data["problems"]
    assert len(problems) == 2
    assert (
        "target" in caught.value.data["details"]
        and "parameters.count" in caught.value.data["details"]
    )


def test_dry_run_executes_nothing(service, project, monkeypatch):
    monkeypatch.setenv("API_KEY", "top-secret-value")
    target = project / "created-by-step"
    wf = workflow(
        command("make", ["touch", "{{parameters.name}}"]),
        {
            "id": "both",
            "title": "b",
            "type": "parallel",
            "parallelLimit": 3,
            "steps": [
                command("a", ["curl", "-H", "token: {{secrets.API_KEY}}"]),
                command("b", ["true"]),
            ],
        },
        secrets=["API_KEY"],
    )
    plan = service.plan(wf, {"name": str(target)}, RunOptions(parallel_limit=2))
    assert not target.exists()
    assert plan["groups"][0]["steps"][0]["argv"] == ["touch", str(target)]
    assert plan["groups"][1]["parallel"] and plan["groups"][1]["parallel_limit"] == 2
    assert plan["groups"][1]["steps"][0]["argv"][2] == "token: ***"
    assert "top-secret-value" not in json.dumps(plan)


def test_dry_run_of_a_loop_with_an_inline_body(service):
    wf = workflow(
        command("first", ["true"]),
        {
            "id": "again",
            "type": "loop",
            "loop": {"type": "for", "count": 2},
            "body": [command("tick", ["echo", "tick"])],
        },
    )
    plan = service.plan(wf, {}, RunOptions())
    assert [g["steps"][0]["step_name"] for g in plan["groups"]] == ["first", "again"]
    assert plan["groups"][1]["steps"][0]["body"][0]["argv"] == ["echo", "tick"]


def test_agent_step_waits_blocks_then_advances(service):
    wf = workflow(
        {
            "id": "ask",
            "title": "Ask",
            "prompt": "Write the plan",
            "validationCriteria": {"type": "contains", "value": "PLAN", "message": "Say PLAN"},
        },
        command("after", ["echo", "{{steps.ask.output}}"]),
    )
    run_id = service.run(wf, {}, RunOptions())
    waiting = service.wait(run_id, 30)
    assert waiting["status"] == "waiting" and waiting["waiting"]["step"]["id"] == "ask"
    blocked = service.continue_run(run_id, "nothing useful")
    assert blocked["outcome"] == "blocked" and blocked["issues"] and blocked["status"] == "waiting"
    done = service.continue_run(run_id, "PLAN: do it", wait_seconds=30)
    assert done["outcome"] == "accepted" and done["status"] == "success"
    assert done["step_results"][-1]["output"]["stdout"] == "PLAN: do it\n"


def test_sandboxed_step_cannot_write_outside_the_project(service, project):
    require("bubblewrap")
    outside = Path("/tmp") / f"workrail-escape-{os.urandom(4).hex()}"
    inside = project / f"inside-{os.urandom(4).hex()}"
    wf = workflow(
        command(
            "boxed", ["sh", "-c", f"touch {inside} && touch {outside} && echo done"], sandbox=True
        )
    )
    result = finish(service, wf)
    assert result["status"] == "success", result
    assert inside.exists() and not outside.exists()


def test_until_and_for_loops(service, tmp_path):
    counter = tmp_path / "n"
    bump = py(
        f"import os; p = {str(counter)!r}; n = int(open(p).read()) + 1 if os.path.exists(p) else 1; "
        "open(p, 'w').write(str(n)); print(n)"
    )
    wf = workflow(
        command("bump", bump),
        {
            "id": "again",
            "title": "again",
            "type": "loop",
            "loop": {
                "type": "until",
                "condition": {"var": "steps.bump.output.stdout", "gte": 3},
                "maxIterations": 10,
            },
            "body": "bump",
        },
        {
            "id": "twice",
            "title": "twice",
            "type": "loop",
            "loop": {"type": "for", "count": 5, "maxIterations": 2, "iterationVar": "i"},
            "body": [command("show", ["echo", "{{context.i}}"])],
        },
    )
    result = finish(service, wf)
    assert result["status"] == "success", result
    names = [r["step_name"] for r in result["step_results"]]
    assert names == [
        "bump[1]",
        "bump[2]",
        "bump[3]",
        "show[1]",
        "show[2]",
    ]  # maxIterations ends the for loop
    assert counter.read_text() == "3"


def test_sandbox_requested_but_unavailable_refuses_the_run(service, monkeypatch, tmp_path):
    from workrail_engine.runs.workspace import SandboxUnavailable

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap to be found
    marker = tmp_path / "ran"
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        service.run(
            workflow(command("boxed", ["/usr/bin/touch", str(marker)], sandbox=True)),
            {},
            RunOptions(),
        )
    assert not marker.exists()


def _echo_group(group_id: str, *members: str) -> dict:
    return {
        "id": group_id,
        "title": group_id,
        "type": "parallel",
        "steps": [command(m, ["echo", f"{m} {{{{context.item}}}}"]) for m in members],
    }


def test_a_parallel_group_in_a_loop_runs_its_members_at_every_iteration(service):
    wf = workflow(
        {
            "id": "each",
            "title": "each",
            "type": "loop",
            "loop": {"type": "forEach", "items": ["a", "b", "c"], "itemVar": "item"},
            "body": [_echo_group("group", "left", "right")],
        }
    )
    result = finish(service, wf)
    assert result["status"] == "success", result
    outputs = {r["step_name"]: r["output"]["stdout"] for r in result["step_results"]}
    assert outputs == {
        f"{m}[{i}]": f"{m} {item}\n" for i, item in enumerate("abc", 1) for m in ("left", "right")
    }
    assert result["steps_completed"] == result["steps_total"]


def test_steps_in_nested_loops_are_keyed_by_every_iteration(service):
    """The lint refuses nested loops (WR204) but the engine API does not lint: a run given them
    keys each step by every enclosing iteration, not the innermost alone."""
    inner = {
        "id": "inner",
        "title": "inner",
        "type": "loop",
        "loop": {"type": "forEach", "items": ["x", "y"], "itemVar": "item"},
        "body": [
            _echo_group("group", "member"),
            command("plain", ["echo", "{{context.round}} {{context.item}}"]),
        ],
    }
    wf = workflow(
        {
            "id": "outer",
            "title": "outer",
            "type": "loop",
            "loop": {"type": "for", "count": 2, "iterationVar": "round"},
            "body": [inner],
        }
    )
    result = finish(service, wf)
    assert result["status"] == "success", result
    outputs = {r["step_name"]: r["output"]["stdout"] for r in result["step_results"]}
    assert outputs == {
        **{
            f"member[{r}][{i}]": f"member {item}\n"
            for r in (1, 2)
            for i, item in ((1, "x"), (2, "y"))
        },
        **{f"plain[{r}][{i}]": f"{r} {item}\n" for r in (1, 2) for i, item in ((1, "x"), (2, "y"))},
    }


def test_a_members_retries_and_step_events_in_a_loop_are_per_iteration(service, tmp_path):
    """Each iteration's member fails its first attempt (a file per item says it was tried), so
    every iteration needs its own two attempts; the step events name each iteration's key."""
    flaky = py(
        f"import os, sys; p = os.path.join({str(tmp_path)!r}, sys.argv[1]); "
        "tried = os.path.exists(p); open(p, 'a').write('x'); print(sys.argv[1]); "
        "sys.exit(0 if tried else 1)"
    ) + ["{{context.item}}"]
    retry = {"maxAttempts": 2, "delaySeconds": 0.01}
    wf = workflow(
        {
            "id": "each",
            "title": "each",
            "type": "loop",
            "loop": {"type": "forEach", "items": ["p", "q"], "itemVar": "item"},
            "body": [
                {
                    "id": "group",
                    "title": "group",
                    "type": "parallel",
                    "steps": [command("flaky", flaky, retry=retry), command("steady", ["true"])],
                }
            ],
        }
    )
    run_id = service.run(wf, {}, RunOptions())
    result = service.wait(run_id, 60)
    assert result["status"] == "success", result
    by_name = {r["step_name"]: r for r in result["step_results"]}
    assert {
        k: (r["attempts"], r["output"]["stdout"]) for k, r in by_name.items() if "flaky" in k
    } == {
        "flaky[1]": (2, "p\n"),
        "flaky[2]": (2, "q\n"),
    }
    assert [(tmp_path / i).read_text() for i in "pq"] == ["xx", "xx"]
    ended = {e["step"] for e in service.step_events(run_id, 0, 0).events if e["event"] == "ended"}
    assert ended == {"flaky[1]", "steady[1]", "flaky[2]", "steady[2]"}


def test_a_service_keeps_the_inputs_of_the_runs_read_last_only(service, monkeypatch):
    """A workflow may be megabytes: a long-lived server asked about many runs keeps the inputs
    of the last ones read (32), and reads an older run's from the store again, the same."""
    from workrail_engine.runs.service import _RunInputs

    monkeypatch.setattr(service, "_inputs", _RunInputs(size=2))
    ids = []
    for name in ("first", "second", "third"):
        ids.append(service.run(workflow(command(name, ["true"]), id=name), {}, RunOptions()))
        assert service.wait(ids[-1], 60)["status"] == "success"
    first = service.get(ids[0])
    for run_id in ids[1:]:
        service.get(run_id)
    assert len(service._inputs) == 2 and service._inputs.get(ids[0]) is None
    assert service.get(ids[0]) == first
    assert service.workflow_of(ids[0])["id"] == "first"
    service.get(ids[2])
    service.get(ids[1])  # the least recently read goes
    assert [service._inputs.get(run_id) is not None for run_id in ids] == [False, True, True]


def test_a_sandboxed_step_inside_a_group_or_a_loop_refuses_the_run_without_bubblewrap(
    service, monkeypatch, tmp_path
):
    from workrail_engine.runs.workspace import SandboxUnavailable

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap to be found
    marker = tmp_path / "ran"
    boxed = command("boxed", ["/usr/bin/touch", str(marker)], sandbox=True)
    nested = [
        _echo_group("group", "left") | {"steps": [command("plain", ["true"]), boxed]},
        {"id": "each", "type": "loop", "loop": {"type": "for", "count": 1}, "body": [boxed]},
    ]
    for step in nested:
        with pytest.raises(SandboxUnavailable, match="bubblewrap"):
            service.run(workflow(command("first", ["true"]), step), {}, RunOptions())
    assert not marker.exists()


def test_a_run_started_here_is_read_without_loading_its_input_again(service, monkeypatch):
    """The service keeps what it started a run with: its first read (a caller's `wait`) does
    not load and decode the whole definition from the store, and reads the same as a read that
    does."""
    from workrail_engine.runs.plan import has_prompts
    from workrail_engine.runs.service import _RunInputs

    runtime = service._runtime()
    loads = []
    run_status = runtime.run_status

    def counted(run_id, *, load_input):
        loads.append(load_input)
        return run_status(run_id, load_input=load_input)

    monkeypatch.setattr(runtime, "run_status", counted)
    prompt = {"id": "ask", "title": "ask", "prompt": "Which?"}
    flows = {
        "commands": workflow(command("one", ["true"]), id="commands"),
        "prompt in a loop": workflow(
            command("one", ["true"]),
            {"id": "each", "type": "loop", "loop": {"type": "for", "count": 1}, "body": [prompt]},
            id="prompted",
        ),
    }
    for flow in flows.values():
        run_id = service.run(flow, {}, RunOptions())
        kept = service._inputs.get(run_id)
        assert kept is not None and kept.prompted == has_prompts(flow)
        here = service.wait(run_id, 60)
        assert here["status"] in ("success", "waiting") and loads and not any(loads)
        monkeypatch.setattr(service, "_inputs", _RunInputs())  # read as another process would
        stored = service.get(run_id)
        assert loads[-1] is True
        for read in (here, stored):
            read.pop("execution_time")  # a waiting run's grows with the clock
        assert stored == here
        loads.clear()


def test_a_runs_steps_are_counted_once_not_at_every_read(service, monkeypatch):
    """A client following a run reads it every tenth of a second: the workflow's steps are
    counted at the first read, from the input kept with the run."""
    from workrail_engine.runs import service as service_module

    counted = []
    count = service_module.executable_steps
    monkeypatch.setattr(
        service_module, "executable_steps", lambda wf: counted.append(wf) or count(wf)
    )
    flow = workflow(command("one", ["true"]), command("two", ["true"]))
    run_id = service.run(flow, {}, RunOptions())
    assert service.wait(run_id, 60)["steps_total"] == 2
    reads = [service.get(run_id)["steps_total"] for _ in range(3)]
    assert reads == [2, 2, 2] and len(counted) == 1


def test_a_run_is_executing_here_before_dbos_is_handed_it(service, monkeypatch):
    # The caller's `wait` comes at once, often before the run's thread has begun: it must find
    # the run executing here (and wait for its changes), not look at it as at a run executing
    # elsewhere (a read every quarter second: a one-step run took 250 ms more, one time in five).
    from dbos import DBOS

    progress = service._runtime().progress
    live_at_start: list[dict[str, list[int]]] = []
    start_workflow = DBOS.start_workflow

    def start(*args, **kwargs):
        live_at_start.append(dict(progress.live))
        return start_workflow(*args, **kwargs)

    monkeypatch.setattr(DBOS, "start_workflow", start)
    run_id = service.run(workflow(command("one", ["true"])), {}, RunOptions())
    assert run_id in live_at_start[0]
    assert service.wait(run_id, 60)["status"] == "success"
    assert run_id not in progress.live


def test_following_a_run_known_here_does_not_look_among_the_sessions(service, monkeypatch):
    asked: list[str] = []
    store = service.sessions.store
    get = store.get

    def recording_get(run_id, *args, **kwargs):
        asked.append(run_id)
        return get(run_id, *args, **kwargs)

    monkeypatch.setattr(store, "get", recording_get)
    run_id = service.run(workflow(command("one", ["true"])), {}, RunOptions())
    assert service.wait(run_id, 60)["status"] == "success"
    assert service.get(run_id)["steps_completed"] == 1
    assert asked == []
    # an id this service has not seen is looked for among the sessions first
    with pytest.raises(RunNotFound):
        service.get("wf-000000000000")
    assert asked == ["wf-000000000000"]
