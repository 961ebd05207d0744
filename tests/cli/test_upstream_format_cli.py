"""Upstream WorkRail's format through the CLI: our fixtures of every construct, valid and invalid.

The fixtures (tests/fixtures/upstream) are written by us; they use each construct of upstream
3.x's schema the way upstream's own workflows do (bench/upstream_compat.py measures the real ones).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "upstream"
VALID = FIXTURES / "workflows"
INVALID = sorted((FIXTURES / "invalid").glob("*.json"))


def report(result) -> dict:
    return json.loads(result.stdout)


def test_the_valid_fixtures_have_no_errors(invoke, tmp_path) -> None:
    result = report(invoke(["validate", "--format", "json", str(VALID)]))
    assert result["summary"]["filesChecked"] == 3  # examples/ is checked when asked for
    codes = {
        Path(f["path"]).name: sorted({(d["code"], d["severity"]) for d in f["diagnostics"]})
        for f in result["files"]
    }
    assert codes == {
        "team.release-review.json": [
            ("WR306", "info"),  # the JS expression and the Mermaid label, kept as written
            ("WR405", "warning"),  # the lookahead pattern runs on the bounded fallback
        ],
        "wr.routine-fixture-check.json": [],
        "example-not-served.json": [],
    }


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_each_invalid_fixture_fails_with_its_code(invoke, path: Path) -> None:
    expected = path.stem.split("-", 1)[0]
    result = report(
        invoke(["--project", str(path.parent), "validate", "--format", "json", str(path)], expect=1)
    )
    errors = [d for d in result["files"][0]["diagnostics"] if d["severity"] == "error"]
    assert [d["code"] for d in errors] == [expected], errors


def test_list_sees_subfolders_and_skips_examples(invoke, tmp_path) -> None:
    listed = report(
        invoke(["--project", str(tmp_path), "--workflows", str(VALID), "list", "--format", "json"])
    )
    ours = {w["id"]: Path(w["path"]) for w in listed if w["source"] == "extra"}
    assert ours == {
        "team.release-review": VALID / "team.release-review.json",
        "wr.routine-fixture-check": VALID / "routines" / "wr.routine-fixture-check.json",
    }


def test_show_and_next_take_a_namespaced_id(invoke, tmp_path) -> None:
    args = ["--project", str(tmp_path), "--workflows", str(VALID)]
    shown = invoke([*args, "show", "team.release-review"]).stdout
    assert "Release review" in shown
    step = json.loads(invoke([*args, "next", "team.release-review", "--format", "json"]).stdout)
    assert step["step"]["id"] == "scope"


def test_a_template_call_is_checked_against_the_catalog(invoke, tmp_path) -> None:
    caller = tmp_path / "caller" / "team.release-review.json"
    caller.parent.mkdir()
    shutil.copy(VALID / "team.release-review.json", caller)
    # Alone, with no routine anywhere: the call names nothing, nor does the delegation to one.
    alone = report(
        invoke(["--project", str(tmp_path), "validate", "--format", "json", str(caller)], expect=1)
    )
    errors = {d["code"]: d for d in alone["files"][0]["diagnostics"] if d["severity"] == "error"}
    assert sorted(errors) == ["WR703", "WR709"]
    assert errors["WR703"]["pointer"].endswith("/templateCall/templateId")
    assert errors["WR709"]["pointer"].endswith("/workflowId")
    # The routine in the catalog (a --workflows directory) answers it.
    routines = tmp_path / "routines-source"
    shutil.copytree(VALID / "routines", routines / "routines")
    found = report(
        invoke(
            [
                "--project",
                str(tmp_path),
                "--workflows",
                str(routines),
                "validate",
                "--format",
                "json",
                str(caller),
            ]
        )
    )
    assert found["summary"]["errors"] == 0


def test_init_starts_plain_and_a_namespaced_id_is_written_by_hand(invoke, tmp_path) -> None:
    # init writes the plain form docs/cli.md names; a namespaced id stays valid in a
    # file, as upstream writes it.
    refused = invoke(["--project", str(tmp_path), "init", "team.release-check"], expect=2)
    assert "(did you mean 'team-release-check'?)" in refused.stderr
    invoke(["--project", str(tmp_path), "init", "team-release-check"])
    path = tmp_path / "workflows" / "team-release-check.json"
    written = json.loads(path.read_text())
    namespaced = path.with_name("team.release-check.json")
    namespaced.write_text(json.dumps({**written, "id": "team.release-check"}))
    invoke(["validate", "--strict", str(namespaced)])
