"""The per-file checks shared with forked workers (`lint_files(..., processes=N)`): what a failing
check logs is printed as one process prints it, and the cross-file checks read the documents
they need. The command line's behaviour is tested through the real process in
tests/cli/test_validate_jobs_cli.py."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from workrail_engine.lint.cross_file import CrossFileFacts, read_whole
from workrail_engine.lint.report import lint_files
from workrail_engine.lint.worker_processes import FILES_PER_TASK

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked")


def _write_batch(directory: Path, count: int) -> list[str]:
    paths = []
    for n in range(count):
        flow = {
            "id": f"flow-{n:03d}",
            "name": "Flow",
            "version": "1.0.0",
            "steps": [{"id": "only", "title": "Only", "prompt": f"Do task {n}."}],
        }
        path = directory / f"flow-{n:03d}.json"
        path.write_text(json.dumps(flow, indent=2))
        paths.append(str(path))
    return paths


def test_what_failing_checks_log_is_printed_in_the_files_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A check that fails on a file of a worker's task and on one of the parent's: each file's
    WR000, and the log records on standard error in the files' order, as in one process."""
    import workrail_engine.lint.schema_errors as schema_errors

    paths = _write_batch(tmp_path, 4 * FILES_PER_TASK)
    failing = {paths[1], paths[-1]}  # the first task is a worker's, the last the parent's
    real = schema_errors.schema_diagnostics

    def fails_on_some(doc):  # the workers are forked after this patch: they have it too
        if doc.path in failing:
            raise RuntimeError(f"simulated bug on {Path(doc.path).name}")
        return real(doc)

    monkeypatch.setattr(schema_errors, "schema_diagnostics", fails_on_some)
    # pytest's own log capture takes the records otherwise: the command line has no handler.
    monkeypatch.setattr(logging.getLogger(), "handlers", [])

    def run(processes: int) -> tuple[list[list[str]], str]:
        reports = lint_files(paths, processes=processes)
        return [[d.message for d in r.diagnostics] for r in reports], capfd.readouterr().err

    alone, shared = run(1), run(2)
    assert shared == alone
    logged = [line for line in alone[1].splitlines() if line.startswith("checking")]
    assert logged == [f"checking {path} failed" for path in (paths[1], paths[-1])]
    assert alone[1].count("RuntimeError: simulated bug on") == 2


def _facts(
    workflow_id: str | None, *, refers: bool = False, can_grow: bool = False
) -> CrossFileFacts:
    return CrossFileFacts(workflow_id, workflow_id is not None, refers, can_grow)


@pytest.mark.parametrize(
    ("facts", "whole"),
    [
        pytest.param([_facts("a"), _facts("b"), _facts(None)], [False, False, False], id="none"),
        pytest.param([_facts("a"), _facts("b"), _facts("a")], [True, False, True], id="twins"),
        pytest.param([_facts("a"), _facts("b", refers=True)], [False, True], id="delegates"),
        pytest.param(
            [_facts("a"), _facts("b", can_grow=True), CrossFileFacts(None, False, False, False)],
            [True, True, False],
            id="one-can-grow-so-every-parsed-file",
        ),
    ],
)
def test_the_cross_file_checks_read_whole_only_what_they_need(
    facts: list[CrossFileFacts], whole: list[bool]
) -> None:
    assert read_whole(facts) == whole
