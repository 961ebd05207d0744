"""Hostile workflow content against the real `workrail` process (docs/security.md): files whose checking,
compiling, reading or regexes used to cost without bound. Each is answered with a code, in bounded
time, and the command goes on to the next thing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.test_hostile_files_cli import workrail
from tests.hostile_workflows import (
    AMPLIFIED_CALLER,
    AMPLIFIER_ROUTINE,
    BOUND_FLOW,
    REGEX_COMPILE_BOMB,
    many_findings_workflow,
    regex_rules_workflow,
)
from workrail_engine.limits import MAX_DOCUMENT_BYTES, MAX_FINDINGS_PER_FILE


def test_thousands_of_findings_in_one_prompt_are_checked_quickly_and_capped(tmp_path: Path):
    """6,000 findings in one string took over a minute (each rebuilt the string's offset table);
    now a few seconds, and the report lists the first 1,000 and one WR009 for the rest."""
    path = tmp_path / "many-findings.json"
    path.write_text(json.dumps(many_findings_workflow(6000)))
    done = workrail(tmp_path, "validate", "--format", "json", str(path), timeout=30)
    assert done.returncode == 1, done.stderr[-2000:]
    [report] = json.loads(done.stdout)["files"]
    found = report["diagnostics"]
    assert len(found) == MAX_FINDINGS_PER_FILE + 1
    assert {d["code"] for d in found[:-1]} == {"WR303"}
    assert found[-1]["code"] == "WR009" and found[-1]["severity"] == "error"
    assert found[-1]["message"].startswith(f"{6000 - MAX_FINDINGS_PER_FILE} more findings")


def bindings_project(tmp_path: Path, kind: str) -> Path:
    """A project whose `.workrail/bindings.json` is a FIFO or a symlink to /dev/zero."""
    project = tmp_path / "project"
    (project / "workflows").mkdir(parents=True)
    (project / "workflows" / "bound-flow.json").write_text(json.dumps(BOUND_FLOW))
    (project / ".workrail").mkdir()
    bindings = project / ".workrail" / "bindings.json"
    if kind == "fifo":
        os.mkfifo(bindings)
    else:
        bindings.symlink_to("/dev/zero")
    return project


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_bindings_file_that_is_no_regular_file_is_not_read(tmp_path: Path, kind: str):
    """`.workrail/bindings.json` as a FIFO hung `workrail next`; as a symlink to /dev/zero it
    grew without bound. Now it is left unused (the defaults apply) and the step is served."""
    project = bindings_project(tmp_path, kind)
    done = workrail(project, "next", "bound-flow", timeout=30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Ask team-check." in done.stdout
    assert "is not used: This is" in done.stderr


def test_continue_reads_its_output_file_the_guarded_way(tmp_path: Path):
    """`--output @/dev/zero` grew to MemoryError and `@FIFO` waited for a writer forever; now
    each is a usage error (exit 2) before any run is looked up, as is a file over 5 MiB."""
    fifo = tmp_path / "answer.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (MAX_DOCUMENT_BYTES + 1))
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9")
    for source, why in (
        ("/dev/zero", "This is a device, not a regular file"),
        (str(fifo), "This is a named pipe (FIFO), not a regular file"),
        (str(big), "File too large"),
        (str(latin), "not UTF-8 text"),
    ):
        done = workrail(tmp_path, "continue", "wf-nothing", "--output", f"@{source}", timeout=30)
        assert done.returncode == 2, (source, done.stdout, done.stderr[-2000:])
        assert why in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]


def test_a_workflow_that_compiles_to_a_gigabyte_fails_validate_and_is_not_served(tmp_path: Path):
    """A 30 KB routine × a 100 KB argument compiled to 1 GB: `workrail validate` passed it and
    `workrail next` built it. Now validate reports WR811 at the call, and next refuses at once."""
    project = tmp_path / "project"
    (project / "workflows").mkdir(parents=True)
    for flow in (AMPLIFIER_ROUTINE, AMPLIFIED_CALLER):
        (project / "workflows" / f"{flow['id']}.json").write_text(json.dumps(flow))
    checked = workrail(project, "validate", "--format", "json", timeout=60)
    assert checked.returncode == 1, checked.stderr[-2000:]
    by_path = {Path(f["path"]).name: f["diagnostics"] for f in json.loads(checked.stdout)["files"]}
    [found] = by_path["amplified.json"]
    assert (found["code"], found["pointer"]) == ("WR811", "/steps/0/templateCall")
    assert by_path["routine-amplify.json"] == []

    served = workrail(project, "next", "amplified", timeout=60)
    assert served.returncode == 1, served.stderr[-2000:]
    assert "WR811" in served.stderr and len(served.stdout + served.stderr) < 10_000


def test_a_regex_whose_fallback_compilation_would_explode_is_refused_by_validate(tmp_path: Path):
    """RE2 refuses the lookahead, and the backtracking engine's compilation of the nested counts
    allocated without bound (MemoryError at a 2 GiB cap); now it is WR401 before compiling."""
    path = tmp_path / "regex-rules.json"
    path.write_text(json.dumps(regex_rules_workflow(REGEX_COMPILE_BOMB)))
    done = workrail(tmp_path, "validate", "--format", "json", str(path), timeout=60)
    assert done.returncode == 1, done.stderr[-2000:]
    [report] = json.loads(done.stdout)["files"]
    codes = {d["code"] for d in report["diagnostics"]}
    assert "WR401" in codes and "WR000" not in codes, report["diagnostics"]
    assert any("expands past 10,000 elements" in d["message"] for d in report["diagnostics"])
