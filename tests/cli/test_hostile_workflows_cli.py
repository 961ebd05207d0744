"""Hostile workflow content against the real `workrail` process (issue 25): files whose checking,
compiling, reading or regexes used to cost without bound. Each is answered with a code, in bounded
time, and the command goes on to the next thing.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_hostile_files_cli import workrail
from workrail_engine.limits import MAX_FINDINGS_PER_FILE


def many_findings_workflow(count: int) -> dict:
    prompt = " ".join(["{{parameters.nope}}"] * count)
    return {
        "id": "many-findings",
        "name": "Many findings",
        "description": "One prompt with thousands of undeclared parameters",
        "steps": [{"id": "only", "title": "Only", "prompt": prompt}],
    }


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
