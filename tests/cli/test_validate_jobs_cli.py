"""`workrail validate` sharing a batch's files with forked worker processes, as a real process:
the same output as one process in every format, a worker that dies or fails costs no file its
report, and no process is left behind."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_console_script_cli import WORKRAIL
from tests.fixable_texts import JSON_TEXT, YAML_TEXT
from tests.hostile_workflows import AMPLIFIED_CALLER, AMPLIFIER_ROUTINE
from workrail_engine.cli.jobs import MAX_PROCESSES, MIN_FILES_FOR_PROCESSES, usable_cpus
from workrail_engine.lint.worker_processes import FILES_PER_TASK, WORKER_TEST_HOOK

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked")

FILES = 4 * FILES_PER_TASK  # the workers take the first tasks, the parent the last ones


def _flow(workflow_id: str, **extra: Any) -> dict[str, Any]:
    steps = [
        {"id": "understand", "title": "Understand", "prompt": f"Read the task of {workflow_id}."},
        {"id": "plan", "title": "Plan", "prompt": "Plan from {{steps.understand.output}}."},
    ]
    return {"id": workflow_id, "name": "Flow", "version": "1.0.0", "steps": steps, **extra}


def _delegating(workflow_id: str, target: str) -> dict[str, Any]:
    flow = _flow(workflow_id)
    flow["steps"].append(
        {
            "id": "delegate",
            "title": "Delegate",
            "parallelDelegations": [{"workflowId": target, "prompt": "Do it."}],
        }
    )
    return flow


def _batch(directory: Path, count: int = FILES) -> Path:
    """``count`` files with every kind of finding; the cross-file ones pair a file of the first
    task (a worker's) with one of the last (the parent's)."""
    workflows = directory / "workflows"
    workflows.mkdir(parents=True)
    special: dict[int, dict[str, Any] | str] = {
        1: _flow("twin"),
        2: {**_flow("schema-error"), "name": 5},
        3: "id: yaml-flow\nname: YAML\nversion: 1.0.0\nsteps:\n  - id: a\n    title: A\n    prompt: p\n",
        4: "id: [unclosed\n",
        5: '{"id": "broken", ',
        6: _delegating("cycle-a", "cycle-b"),
        7: {
            **_flow("semantic-error"),
            "steps": [{"id": "s", "title": "S", "prompt": "{{steps.nope.output}}"}],
        },
        8: AMPLIFIER_ROUTINE,
        count - 4: {
            **_flow("unknown-template"),
            "steps": [
                {
                    "id": "c",
                    "title": "C",
                    "templateCall": {"templateId": "wr.templates.routine.nothing"},
                }
            ],
        },
        count - 3: _delegating("cycle-b", "cycle-a"),
        count - 2: _flow("twin"),
        count - 1: AMPLIFIED_CALLER,
    }
    for n in range(count):
        content = special.get(n, _flow(f"flow-{n:03d}"))
        suffix = ".yaml" if n in (3, 4) else ".json"
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        (workflows / f"f{n:03d}{suffix}").write_text(text, encoding="utf-8")
    return workflows


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str
    process_group: int

    @property
    def outcome(self) -> tuple[int, str, str]:
        return self.returncode, self.stdout, self.stderr

    def left_nothing_running(self) -> bool:
        try:
            os.killpg(self.process_group, 0)
        except ProcessLookupError:
            return True
        return False


def _validate(*args: str, hook: str | None = None) -> Ran:
    env = {k: v for k, v in os.environ.items() if k != WORKER_TEST_HOOK}
    if hook is not None:
        env[WORKER_TEST_HOOK] = hook
    with subprocess.Popen(
        [str(WORKRAIL), "validate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group: what it leaves behind is found there
    ) as process:
        stdout, stderr = process.communicate(timeout=120)
    return Ran(process.returncode, stdout, stderr, process.pid)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(("--format", "text"), id="text"),
        pytest.param(("--format", "json"), id="json"),
        pytest.param(("--statistics",), id="statistics"),
    ],
)
def test_workers_report_what_one_process_reports(tmp_path: Path, options: tuple[str, ...]):
    workflows = _batch(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    alone = _validate(str(workflows), *options, "--jobs", "1")
    shared = _validate(str(workflows), *options, "--jobs", "2", hook=f"mark:{marks}")
    assert any(marks.iterdir()), "no worker checked a file"
    assert shared.outcome == alone.outcome
    assert alone.returncode == 1
    assert shared.left_nothing_running()


def test_the_batch_has_a_finding_of_every_kind(tmp_path: Path):
    """What the test above compares: schema, semantic, syntax and every cross-file finding."""
    workflows = _batch(tmp_path)
    report = json.loads(_validate(str(workflows), "--format", "json", "--jobs", "2").stdout)
    codes = {d["code"] for f in report["files"] for d in f["diagnostics"]}
    assert {"WR101", "WR301", "WR001", "WR603", "WR703", "WR710", "WR811"} <= codes, codes


@pytest.mark.parametrize("fault", ["kill", "memory-error"])
def test_a_worker_that_dies_or_fails_costs_no_file_its_report(tmp_path: Path, fault: str):
    workflows = _batch(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    alone = _validate(str(workflows), "--format", "json", "--jobs", "1")
    shared = _validate(str(workflows), "--format", "json", "--jobs", "2", hook=f"{fault}:{marks}")
    assert any(marks.iterdir()), "no worker took a task"
    assert shared.outcome == alone.outcome
    assert shared.left_nothing_running()


@pytest.mark.skipif(usable_cpus() < 2, reason="one usable CPU: one process")
def test_a_batch_past_the_threshold_uses_workers_by_default(tmp_path: Path):
    workflows = _batch(tmp_path, MIN_FILES_FOR_PROCESSES)
    marks = tmp_path / "marks"
    marks.mkdir()
    shared = _validate(str(workflows), "--format", "json", hook=f"mark:{marks}")
    assert any(marks.iterdir()), "no worker checked a file"
    assert shared.outcome == _validate(str(workflows), "--format", "json", "--jobs", "1").outcome
    fewer = _batch(tmp_path / "fewer", MIN_FILES_FOR_PROCESSES - 1)
    for mark in marks.iterdir():
        mark.unlink()
    _validate(str(fewer), "--format", "json", hook=f"mark:{marks}")
    assert not any(marks.iterdir()), "a worker was forked below the threshold"


def test_jobs_past_the_maximum_is_a_usage_error(tmp_path: Path):
    workflows = _batch(tmp_path, 2)
    refused = _validate(str(workflows), "--jobs", str(MAX_PROCESSES + 1))
    assert refused.returncode == 2 and "--jobs" in refused.stderr, refused.stderr
    assert _validate(str(workflows), "--jobs", str(MAX_PROCESSES)).returncode == 1


@pytest.mark.parametrize("fix", ["--fix", "--diff"])
def test_fixes_then_workers_report_what_one_process_reports(tmp_path: Path, fix: str):
    """The fixes are made in one process, the fixed files then checked by the workers: the same
    files written, the same report, as one process (two copies of a batch with fixable texts)."""
    ran = {}
    for jobs in ("1", "2"):
        workflows = _batch(tmp_path / jobs)
        for n in range(0, FILES, 7):
            (workflows / f"f{n:03d}.json").write_text(JSON_TEXT.replace("broken", f"fix-{n}"))
        (workflows / "f003.yaml").write_text(YAML_TEXT)
        done = _validate(str(workflows), fix, "--unsafe-fixes", "--jobs", jobs)
        written = {p.name: p.read_text() for p in sorted(workflows.iterdir())}
        ran[jobs] = (done.outcome, written, str(workflows))
    (alone, alone_files, alone_dir), (shared, shared_files, shared_dir) = ran["1"], ran["2"]
    assert tuple(part.replace(shared_dir, alone_dir) for part in shared[1:]) == alone[1:]
    assert (shared[0], shared_files) == (alone[0], alone_files)
    fixed = 'name: "no"' in alone_files["f003.yaml"]  # a fix was written (or only shown)
    assert fixed == (fix == "--fix") and alone[0] == 1
