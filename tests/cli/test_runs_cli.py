"""`workrail run / runs / run-status / cancel` as a user types them.

What opens the run store (a run, the list, a status, a cancel, a continue) is a real process:
those are what a process's start, end, signals and store make different. What opens nothing (a
dry run's plan, a parameter refused before anything starts, `next`) runs in-process through
click's runner, as the other CLI modules run the catalog commands: a process for each of those
cost ≈ 0.25 s of CPU and told nothing more (docs/benchmarks.md, The test suite)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import Result

pytestmark = pytest.mark.slow

FLOW = {
    "id": "cli-flow",
    "name": "CLI flow",
    "description": "touch a file named by a parameter",
    "version": "1.0.0",
    "parameters": {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string"}, "nap": {"type": "number", "default": 0}},
    },
    "steps": [
        {
            "id": "make",
            "title": "Make",
            "run": {"command": ["touch", "{{parameters.name}}"], "timeoutSeconds": 10},
        },
        {
            "id": "nap",
            "title": "Nap",
            "run": {
                "command": [
                    sys.executable,
                    "-c",
                    "import time, sys; time.sleep(float(sys.argv[1]))",
                    "{{parameters.nap}}",
                ],
                "timeoutSeconds": 60,
            },
            "runCondition": {"var": "nap", "gt": 0},
        },
    ],
}


@pytest.fixture
def cli_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "cli-flow.json").write_text(json.dumps(FLOW))
    return root


def workrail(project: Path, tmp_path: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "WORKRAIL_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from workrail_engine.cli import main; main()",
            "--project",
            str(project),
            *args,
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        **kw,
    )


def workrail_in_process(invoke, project: Path, *args: str) -> Result:
    """`workrail --project PROJECT ARGS` through click's runner (the `invoke` fixture: the same
    WORKRAIL_HOME as :func:`workrail`), for commands that open no run store."""
    return invoke(["--project", str(project), *args], expect=None)


def test_a_misspelt_parameter_is_refused_with_the_declared_ones(cli_project, invoke):
    done = workrail_in_process(
        invoke, cli_project, "run", "cli-flow", "--param", "name=x", "--param", "npa=1"
    )
    assert done.exit_code == 2, done.stdout + done.stderr
    assert "'npa' (did you mean 'nap'?)" in done.stderr
    assert "its parameters: name, nap" in done.stderr
    assert "started" not in done.stderr and not (cli_project / "x").exists()


def test_project_and_workflows_go_after_the_runs_commands_too(
    cli_project, tmp_path, invoke, monkeypatch
):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "extra-flow.json").write_text(json.dumps({**FLOW, "id": "extra-flow"}))
    env = {**os.environ, "WORKRAIL_HOME": str(tmp_path / "home")}
    run = [sys.executable, "-c", "from workrail_engine.cli import main; main()"]
    monkeypatch.chdir(tmp_path)
    planned = invoke(
        ["run", "extra-flow", "--param", "name=x", "--dry-run",
         "--project", str(cli_project), "--workflows", str(extra)],
    )  # fmt: skip
    assert "1. make: touch x" in planned.stdout
    listed = subprocess.run(
        [*run, "runs", "--project", str(cli_project)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr


def test_the_bundled_quality_gate_refuses_pth_for_path(cli_project, invoke):
    done = workrail_in_process(
        invoke, cli_project, "run", "python-quality-gate", "--param", "pth=pkg", "--dry-run"
    )
    assert done.exit_code == 2, done.stdout + done.stderr
    assert "has no parameter 'pth' (did you mean 'path'?)" in done.stderr


def test_dry_run_plans_and_creates_nothing(cli_project, tmp_path, invoke):
    text = workrail_in_process(
        invoke, cli_project, "run", "cli-flow", "--param", "name=made.txt", "--dry-run"
    )
    assert text.exit_code == 0, text.stderr
    assert "1. make: touch made.txt  [timeout 10 s]" in text.stdout.splitlines(), text.stdout
    assert "nothing executed" in text.stdout
    out = workrail_in_process(
        invoke,
        cli_project,
        "run",
        "cli-flow",
        "--param",
        "name=made.txt",
        "--dry-run",
        "--format",
        "json",
    )
    assert out.exit_code == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["groups"][0]["steps"][0]["argv"] == ["touch", "made.txt"]
    assert not (cli_project / "made.txt").exists()
    assert not (tmp_path / "home" / "runs").exists()  # no run store was even opened


def test_run_then_runs_and_run_status(cli_project, tmp_path):
    out = workrail(
        cli_project, tmp_path, "run", "cli-flow", "--param", "name=made.txt", "--param", "nap=0"
    )
    assert out.returncode == 0, out.stderr
    assert (cli_project / "made.txt").exists()
    run_id = out.stderr.split("started ", 1)[1].split()[0]
    assert f"{run_id}: success" in out.stdout
    listed = workrail(cli_project, tmp_path, "runs", "--format", "json")
    assert [r["workflow_id"] for r in json.loads(listed.stdout)] == [run_id]
    status = workrail(cli_project, tmp_path, "run-status", run_id, "--format", "json")
    assert json.loads(status.stdout)["step_results"][0]["step_name"] == "make"
    assert workrail(cli_project, tmp_path, "run-status", "wf-missing").returncode == 1


def test_missing_parameter_is_reported(cli_project, invoke):
    out = workrail_in_process(invoke, cli_project, "run", "cli-flow")
    assert out.exit_code == 1 and "name" in out.stderr


EACH_FILE = {
    "id": "each-file",
    "name": "Each file",
    "description": "touch each file named by a parameter, then done",
    "version": "1.0.0",
    "parameters": {"type": "object", "properties": {"files": {"type": "string"}}},
    "steps": [
        {
            "id": "each",
            "type": "loop",
            "loop": {"type": "forEach", "items": "parameters.files", "itemVar": "file"},
            "body": [
                {
                    "id": "touch",
                    "title": "Touch",
                    "run": {"command": ["touch", "{{context.file}}"], "timeoutSeconds": 10},
                }
            ],
        },
        {
            "id": "done",
            "title": "Done",
            "run": {"command": ["touch", "done"], "timeoutSeconds": 10},
        },
    ],
}


def test_a_run_over_items_that_are_no_array_fails_as_workflow_next_does(
    cli_project, tmp_path, invoke
):
    (cli_project / "workflows" / "each-file.json").write_text(json.dumps(EACH_FILE))
    told = workrail_in_process(
        invoke, cli_project, "next", "each-file", "--context", "parameters.files=a.py"
    )
    assert told.exit_code == 1, told.stdout
    message = told.stderr.strip().removeprefix("error: ")
    assert message == "Loop 'each': items must be an array, got str"
    out = workrail(cli_project, tmp_path, "run", "each-file", "--param", "files=a.py")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "failed — 0/2 steps" in out.stdout and out.stdout.strip().endswith(message), out.stdout
    assert not (cli_project / "done").exists()  # the run stopped at the loop


def start_a_long_run(cli_project, tmp_path) -> subprocess.Popen[str]:
    """`workrail run cli-flow` as its own process, with a step that sleeps for a minute."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from workrail_engine.cli import main; main()",
            "--project",
            str(cli_project),
            "run",
            "cli-flow",
            "--param",
            "name=x",
            "--param",
            "nap=60",
        ],
        cwd=cli_project,
        env={**os.environ, "WORKRAIL_HOME": str(tmp_path / "home")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_ctrl_c_cancels_the_run(cli_project, tmp_path):
    proc = start_a_long_run(cli_project, tmp_path)
    deadline = time.monotonic() + 60
    while not (cli_project / "x").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    run_id = err.split("started ", 1)[1].split()[0]
    status = workrail(cli_project, tmp_path, "run-status", run_id, "--format", "json")
    assert json.loads(status.stdout)["status"] == "cancelled"


def test_cancel_from_another_process_stops_the_run_within_five_seconds(cli_project, tmp_path):
    proc = start_a_long_run(cli_project, tmp_path)
    try:
        line = ""
        while "started " not in line:
            line = proc.stderr.readline()
            assert line, "workrail run ended before it started the run"
        run_id = line.split("started ", 1)[1].split()[0]
        deadline = time.monotonic() + 60
        while not (cli_project / "x").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the nap step is running
        cancelled = workrail(cli_project, tmp_path, "cancel", run_id, "--reason", "from elsewhere")
        assert cancelled.returncode == 0, cancelled.stderr
        started = time.monotonic()
        out, err = proc.communicate(timeout=30)
        assert time.monotonic() - started < 5, "the run's process outlived the cancel by 5 s"
    finally:
        proc.kill()
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "Traceback" not in cancelled.stderr, err
    status = json.loads(
        workrail(cli_project, tmp_path, "run-status", run_id, "--format", "json").stdout
    )
    assert status["status"] == "cancelled" and "from elsewhere" in status["error_message"]
    assert [r["step_name"] for r in status["step_results"] if r["status"] == "success"] == ["make"]


CONTINUE = """
import json, sys
from pathlib import Path
from workrail_engine.runs import RunService
service = RunService(Path(sys.argv[1]), allow_commands=True)
service.start()
service.wait(sys.argv[2], 30)  # recovered from the CLI's process, back at the prompt
print(json.dumps(service.continue_run(sys.argv[2], "done it", wait_seconds=30)))
"""


def test_a_run_left_waiting_by_the_cli_is_taken_over_later(tmp_path):
    project = tmp_path / "project"
    (project / "workflows").mkdir(parents=True)
    flow = {
        "id": "ask-flow",
        "name": "Ask",
        "description": "a command then a question",
        "version": "1.0.0",
        "steps": [
            {
                "id": "first",
                "title": "First",
                "run": {"command": ["echo", "hi"], "timeoutSeconds": 10},
            },
            {"id": "question", "title": "Question", "prompt": "Tell me"},
        ],
    }
    (project / "workflows" / "ask-flow.json").write_text(json.dumps(flow))
    started = time.monotonic()
    out = workrail(project, tmp_path, "run", "ask-flow")
    assert out.returncode == 0 and time.monotonic() - started < 30, out.stderr
    assert "waiting for the agent at step 'question'" in out.stdout
    run_id = out.stderr.split("started ", 1)[1].split()[0]
    listed = workrail(project, tmp_path, "runs", "--running")
    assert f"{run_id}  waiting" in listed.stdout, listed.stdout  # the list agrees with run-status
    env = {**os.environ, "WORKRAIL_HOME": str(tmp_path / "home")}
    later = subprocess.run(
        [sys.executable, "-c", CONTINUE, str(project), run_id],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert later.returncode == 0, later.stderr
    result = json.loads(later.stdout)
    assert result["status"] == "success" and result["step_results"][-1]["output"] == "done it"


ANSWER_FLOW = {
    "id": "answer-flow",
    "name": "Answer",
    "description": "a question whose answer is checked, then a command that echoes it",
    "version": "1.0.0",
    "metaGuidance": ["Be brief"],
    "steps": [
        {
            "id": "question",
            "title": "Question",
            "prompt": "Say PLAN and something",
            "validationCriteria": [
                {"type": "contains", "value": "PLAN", "message": "Start with PLAN"}
            ],
        },
        {
            "id": "echo",
            "title": "Echo",
            "run": {"command": ["echo", "{{steps.question.output}} {{context.flavour}}"]},
        },
    ],
}


def test_continue_answers_a_waiting_run_from_the_terminal(tmp_path, invoke):
    project = tmp_path / "project"
    (project / "workflows").mkdir(parents=True)
    (project / "workflows" / "answer-flow.json").write_text(json.dumps(ANSWER_FLOW))
    dry = workrail_in_process(invoke, project, "run", "answer-flow", "--dry-run")
    assert dry.exit_code == 0 and "timeout None" not in dry.stdout, dry.stdout
    assert "no overall timeout" in dry.stdout.splitlines()[0]
    out = workrail(project, tmp_path, "run", "answer-flow")
    assert out.returncode == 0, out.stderr
    run_id = out.stderr.split("started ", 1)[1].split()[0]
    assert "- Be brief" in out.stdout  # the run path's guidance carries the metaGuidance
    assert f"run: workrail continue {run_id} --step question --output TEXT|@FILE" in out.stdout
    assert "continue_workflow" not in out.stdout  # the CLI speaks of its own commands

    blocked = workrail(project, tmp_path, "continue", run_id, "--output", "no plan")
    assert blocked.returncode == 1 and "Start with PLAN" in blocked.stdout, blocked
    answer = tmp_path / "answer.txt"
    answer.write_text("PLAN: cache")
    done = workrail(
        project,
        tmp_path,
        "continue",
        run_id,
        "--output",
        f"@{answer}",
        "--context",
        "flavour=salty",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "success" and result["outcome"] == "accepted"
    assert result["step_results"][-1]["output"]["stdout"] == "PLAN: cache salty\n"
    assert "Traceback" not in done.stderr + blocked.stderr + out.stderr

    listed = workrail(project, tmp_path, "runs")
    assert listed.stdout.splitlines()[0].split() == ["RUN", "STATUS", "STARTED", "WORKFLOW"]
    assert listed.stdout.splitlines()[1].startswith(f"{run_id}  success")

    mixed_up = workrail(project, tmp_path, "run-status", "answer-flow")
    assert mixed_up.returncode == 1
    assert (
        "'answer-flow' is a workflow id; run ids look like wf-… — run `workrail run answer-flow` "
        "to start one" in mixed_up.stderr
    ), mixed_up.stderr
    assert f"(recent runs: '{run_id}')" in mixed_up.stderr  # the runs of that workflow
    assert "Traceback" not in mixed_up.stderr


# --- a dry run shows the prompts the next step serves --------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def dry_run_project(tmp_path: Path) -> Path:
    """A workflow with prompt blocks, a fragment and a routine template call, and its routine."""
    root = tmp_path / "project"
    (root / "workflows").mkdir(parents=True)
    for path in (
        FIXTURES / "upstream_nav" / "nav-dry-run.json",
        FIXTURES / "upstream_nav" / "routines" / "routine-nav-check.json",
    ):
        (root / "workflows" / path.name).write_text(path.read_text())
    return root


def test_dry_run_prompts_are_the_prompts_the_next_step_serves(tmp_path, invoke):
    project = dry_run_project(tmp_path)
    dry = workrail_in_process(
        invoke,
        project,
        "run",
        "nav-dry-run",
        "--param",
        "ticket=T-7",
        "--dry-run",
        "--format",
        "json",
    )
    assert dry.exit_code == 0, dry.stderr
    planned = [
        (s["step_name"], s["prompt"]) for g in json.loads(dry.stdout)["groups"] for s in g["steps"]
    ]
    served, done = [], []
    while True:
        args = ["next", "nav-dry-run", "--format", "json"]
        args += ["--context", 'parameters={"ticket": "T-7"}']
        if done:
            args += ["--completed", ",".join(done)]
        found = workrail_in_process(invoke, project, *args)
        assert found.exit_code == 0, found.stderr
        step = json.loads(found.stdout)["step"]
        if step is None:
            break
        served.append((step["id"], step["prompt"]))
        done.append(step["id"])
    assert planned == served
    # the compiled form: prompt blocks as sections, the routine expanded with its arguments,
    # parameters filled and what an empty context cannot say shown as unset
    assert [name for name, _ in planned] == ["plan", "check.inspect", "check.verdict", "report"]
    assert planned[0][1].startswith("## Goal\nPlan T-7 for [unset: context.owner].\n\n")
    assert planned[0][1].endswith("Mind [unset: owner].")
    assert planned[1][1] == "Inspect the plan to depth 2 for [unset: feature]."
    assert planned[3][1] == "Report on T-7 to T-7's owner."
