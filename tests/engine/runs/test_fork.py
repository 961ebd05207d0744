"""`RunService.fork` in process: retries, secrets, a fork from the step a run waits on, the rows
copied; and the switches of a fork of a fork (fork.py). The CLI and the MCP server are tested
through their processes in tests/cli/test_fork_cli.py and tests/mcp/test_fork_tool.py."""

from __future__ import annotations

import sqlite3

import pytest
from runs_support import command, fork_flow, py, workflow
from test_secrets import database_text, leaks, new_secret

from workrail_engine.errors import InvalidParams
from workrail_engine.runs import RunOptions
from workrail_engine.runs.fork import ForkPoint, fork_point, fork_walk, forked_from_input
from workrail_engine.runs.history import RunHistory


def _log(path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_kept_step_keeps_its_attempts_and_the_step_forked_from_gets_all_of_its_own(
    service, tmp_path
):
    count = tmp_path / "count"
    flaky = py(  # fails until it has run twice
        f"import sys; p = {str(count)!r}; open(p, 'a').write('x'); "
        "sys.exit(0 if len(open(p).read()) >= 2 else 1)"
    )
    wf = workflow(
        command("flaky", flaky, retry={"maxAttempts": 3, "delaySeconds": 0}),
        command("after", py("print('after')")),
    )
    parent = service.run(wf, {}, RunOptions())
    done = service.wait(parent, 30)
    assert done["status"] == "success" and done["step_results"][0]["attempts"] == 2
    assert count.read_text() == "xx"

    kept = service.wait(service.fork(parent, "after"), 30)
    assert kept["step_results"][0] == done["step_results"][0]  # not run again: 2 attempts kept
    assert count.read_text() == "xx"
    again = service.wait(service.fork(parent, "flaky"), 30)
    assert again["step_results"][0]["attempts"] == 1 and count.read_text() == "xxx"

    journal = service.runtime.journal
    (fork,) = [f for f in journal.forks_of([parent])[parent] if f["step"] == "after"]
    with sqlite3.connect(service.home / "runs.sqlite") as db:
        parent_rows = db.execute(
            "SELECT count(*) FROM workrail_journal WHERE run_id = ? AND step_key = 'flaky'",
            (parent,),
        ).fetchone()[0]
    assert fork["rows_copied"] == parent_rows == 2  # one row per attempt, and nothing else
    # a replay of the fork (DBOS runs it again after a crash) copies nothing again
    assert [r["step_name"] for r in journal.keep(fork["run_id"], parent, "after", 1)] == ["flaky"]
    with sqlite3.connect(service.home / "runs.sqlite") as db:
        assert (
            db.execute(
                "SELECT count(*) FROM workrail_journal WHERE run_id = ?", (fork["run_id"],)
            ).fetchone()[0]
            == parent_rows + 1
        )  # the kept rows and its own `after`

    history = RunHistory(home=service.home)  # what the dashboard reads
    try:
        assert [f["step"] for f in history.run(parent)["forks"]] == ["after", "flaky"]
        assert history.run(fork["run_id"])["forked_from"] == {"run_id": parent, "step": "after"}
        assert history.run(parent)["forked_from"] is None
    finally:
        history.close()


def test_secrets_are_read_again_from_the_environment_never_copied(
    service, run_home, tmp_path, monkeypatch
):
    used = tmp_path / "used"
    write = py(
        "import os, sys; s = os.environ['FORK_TOKEN']; "
        f"open({str(used)!r}, 'a').write(s + '\\n'); print(s)"
    )
    wf = workflow(command("before", write), command("use", write), secrets=["FORK_TOKEN"])
    old, new = new_secret(), new_secret()
    monkeypatch.setenv("FORK_TOKEN", old)
    parent = service.run(wf, {}, RunOptions())
    assert service.wait(parent, 30)["status"] == "success"
    monkeypatch.setenv("FORK_TOKEN", new)
    fork = service.wait(service.fork(parent, "use"), 30)
    assert fork["status"] == "success"
    assert _log(used) == [old, old, new]
    assert [r["output"]["stdout"] for r in fork["step_results"]] == ["***\n", "***\n"]
    stored = database_text(run_home)
    assert leaks(stored, old) == [] and leaks(stored, new) == []


def test_a_fork_from_the_step_a_run_waits_on_keeps_everything_before_it(service, tmp_path):
    marks = tmp_path / "marks"
    wf = workflow(
        command("mark", py(f"open({str(marks)!r}, 'a').write('m\\n')")),
        {"id": "ask", "title": "Ask", "prompt": "Go on?"},
    )
    parent = service.run(wf, {}, RunOptions())
    assert service.wait(parent, 30)["status"] == "waiting"
    fork = service.wait(service.fork(parent, "ask"), 30)
    assert fork["status"] == "waiting" and fork["waiting"]["step_key"] == "ask"
    assert [r["step_name"] for r in fork["step_results"]] == ["mark"]
    assert _log(marks) == ["m"]
    with pytest.raises(InvalidParams) as refused:
        service.fork(parent, "later")
    assert refused.value.data["steps"] == ["mark", "ask"]
    for run_id in (parent, fork["workflow_id"]):  # ended: not left waiting when the store closes
        assert service.continue_run(run_id, "yes", wait_seconds=30)["status"] == "success"


def test_a_fork_of_a_fork_walks_what_it_keeps_with_the_values_its_parent_had(service, tmp_path):
    """The parent forked its root before a loop whose count is a parameter; its own fork keeps
    the loop: the walk must count the loop with the parent's value, not the root's, for the step
    after it to read the last iteration's output."""
    log = tmp_path / "log"
    wf = workflow(
        command("a", py("print('a')")),
        {
            "id": "rep",
            "title": "rep",
            "type": "loop",
            "loop": {"type": "for", "count": "n", "iterationVar": "i"},
            "body": [command("b", py("import sys; print(sys.argv[1], end='')") + ["{{context.i}}"])],
        },
        command("z", py(f"import sys; open({str(log)!r}, 'a').write(sys.argv[1] + '\\n')") + ["{{steps.b.output.stdout}}"]),
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
    )  # fmt: skip
    root = service.run(wf, {"n": 1}, RunOptions())
    assert service.wait(root, 30)["status"] == "success"
    parent = service.wait(service.fork(root, "a", {"n": 3}), 30)
    assert [r["step_name"] for r in parent["step_results"]] == ["a", "b[1]", "b[2]", "b[3]", "z"]
    child = service.wait(service.fork(parent["workflow_id"], "z"), 30)
    assert child["status"] == "success"
    assert log.read_text().splitlines() == ["1", "3", "3"]


# --- the fork point and the switches (no store) --------------------------------------------------


def test_a_step_id_names_its_first_result_and_a_key_names_itself():
    results = [
        {"step_name": "a", "step_id": "a"},
        {"step_name": "b[1]", "step_id": "b"},
        {"step_name": "b[2]", "step_id": "b"},
    ]
    assert fork_point(results, None, "b") == fork_point(results, None, "b[1]")
    assert fork_point(results, None, "b[2]").kept == 2
    assert fork_point(results, "c[3]", "c").kept == 3


def test_a_group_or_loop_id_names_the_first_of_its_steps_that_ran(tmp_path):
    """In the order the steps ended (a parallel group's members in any order), a group or loop
    names its first step that ran; ``pair[2]`` its run in the loop's iteration 2; one none of
    whose steps ran (or waits) is refused with the keys."""
    flow = fork_flow(tmp_path / "log")
    keys = ["first", "right[1]", "left[1]", "left[2]", "right[2]", "last"]
    results = [{"step_name": k, "step_id": k.split("[")[0]} for k in keys]
    assert fork_point(results, None, "each", flow) == ForkPoint("right[1]", 1)
    assert fork_point(results, None, "pair", flow) == ForkPoint("right[1]", 1)
    assert fork_point(results, None, "pair[2]", flow) == ForkPoint("left[2]", 3)
    assert fork_point(results[:1], "left[1]", "each", flow) == ForkPoint("left[1]", 1)
    with pytest.raises(InvalidParams) as refused:
        fork_point(results[:1], None, "each", flow)
    assert "'each' is a loop none of whose steps has run" in refused.value.message
    assert refused.value.data["steps"] == ["first"]
    with pytest.raises(InvalidParams) as refused:
        fork_point(results, None, "pair[3]", flow)
    assert "'pair[3]' is a parallel group none of whose steps has run" in refused.value.message


def test_a_fork_of_a_fork_replays_the_parents_switch_when_it_falls_in_what_it_keeps():
    root = {"parameters": {"tag": "a"}}
    first = forked_from_input("wf-root", root, fork_point(_results(6), None, "s2"), {"tag": "b"}, {"note": "x"}, {})  # fmt: skip
    child = {"parameters": {"tag": "b"}, "forked_from": first}
    later = forked_from_input("wf-1", child, fork_point(_results(6), None, "s4"), {"tag": "c"}, {}, {})  # fmt: skip
    earlier = forked_from_input("wf-1", child, fork_point(_results(6), None, "s1"), {"tag": "d"}, {}, {})  # fmt: skip
    assert (
        later["parameters"] == earlier["parameters"] == {"tag": "a"}
    )  # the walk starts as the root's
    assert [s["kept"] for s in later["switches"]] == [2, 4]
    assert [s["kept"] for s in earlier["switches"]] == [1]  # the parent's switch comes after it

    walk = fork_walk(later, [r["step_name"] for r in _results(6)])  # its own results after
    values: dict = {"parameters": walk.parameters, "context": {}}
    seen = []
    for key in ("s0", "s1", "s2", "s3", "s4", "s5"):
        walk.switches.reaching(key, values)
        seen.append((values["parameters"]["tag"], dict(values["context"])))
    assert seen == [
        ("a", {}),
        ("a", {}),
        ("b", {"note": "x"}),  # the parent's switch, inside what this fork keeps
        ("b", {"note": "x"}),
        ("c", {"note": "x"}),  # its own, at its fork point (the first step it does not keep)
        ("c", {"note": "x"}),  # each switch once
    ]


def _results(n: int) -> list[dict]:
    return [{"step_name": f"s{i}", "step_id": f"s{i}"} for i in range(n)]
