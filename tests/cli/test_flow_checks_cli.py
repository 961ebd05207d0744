"""`workrail validate` as a process finds each seeded flow bug (tests/engine/lint/flow_bugs.py)
by its code at its range, honours --select/--ignore for the new codes, and reports a missing
ShellCheck as a note, never a failure."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_console_script_cli import run
from tests.engine.lint.flow_bugs import SEEDED_BUGS
from workrail_engine.lint.flow import MAX_RELATED_READS


def _write_corpus(root: Path) -> Path:
    """The corpus as a project's workflows/ folder (what `workrail validate DIR` looks for)."""
    folder = root / "workflows"
    folder.mkdir()
    for bug in SEEDED_BUGS:
        (folder / bug.name).write_text(bug.text, encoding="utf-8")
    return folder


def _report(*args: str, env: dict[str, str] | None = None) -> dict[str, list[dict]]:
    result = run("validate", *args, "--format", "json", env=env)
    assert result.returncode in (0, 1), result.stderr
    return {Path(f["path"]).name: f["diagnostics"] for f in json.loads(result.stdout)["files"]}


def test_each_seeded_bug_is_found_by_its_code_at_its_range(tmp_path: Path) -> None:
    report = _report(str(_write_corpus(tmp_path)))
    for bug in SEEDED_BUGS:
        found = {
            (d["code"], d["severity"], bug.text[d["span"]["start"] : d["span"]["end"]])
            for d in report[bug.name]
        }
        assert (bug.code, bug.severity, bug.on_text) in found, (bug.name, found)
        assert {code for code, _, _ in found} == {bug.code}, (bug.name, found)  # one construct


def test_select_and_ignore_apply_to_the_flow_codes(tmp_path: Path) -> None:
    folder = str(_write_corpus(tmp_path))
    selected = _report(folder, "--select", "WR503")
    assert {d["code"] for ds in selected.values() for d in ds} == {"WR503"}
    ignored = _report(folder, "--ignore", "WR207,WR307,WR308,WR309,WR410,WR411,WR502,WR503")
    assert [d for ds in ignored.values() for d in ds] == []


def test_without_shellcheck_the_script_gets_a_note_and_validate_passes(tmp_path: Path) -> None:
    bug = next(b for b in SEEDED_BUGS if b.name == "shellcheck.json")
    script = tmp_path / bug.name
    script.write_text(bug.text, encoding="utf-8")
    result = run("validate", str(script), env={"WORKRAIL_SHELLCHECK": ""})
    assert result.returncode == 0, result.stdout
    assert "WR504 This script was not checked with ShellCheck: ShellCheck is not installed" in (
        result.stdout
    )
    broken = run("validate", str(script), env={"WORKRAIL_SHELLCHECK": str(tmp_path / "nope")})
    assert broken.returncode == 0 and "could not be run" in broken.stdout, broken.stdout


def test_per_file_ignores_apply_to_the_flow_codes(tmp_path: Path) -> None:
    folder = _write_corpus(tmp_path)
    (tmp_path / ".git").mkdir()  # the project's root: the configuration is looked for up to it
    (tmp_path / ".workrail").mkdir()
    (tmp_path / ".workrail" / "config.toml").write_text(
        '[per-file-ignores]\n"workflows/shellcheck*" = ["WR503"]\n'
        '"workflows/loop-unchanged.json" = ["WR207"]\n'
    )
    report = _report(str(folder))
    assert not [d for d in report["shellcheck.json"] if d["code"] == "WR503"]
    assert not [d for d in report["shellcheck-block.yaml"] if d["code"] == "WR503"]
    assert report["loop-unchanged.json"] == []
    assert [d["code"] for d in report["skipped-output.json"]] == ["WR307"]


def test_a_variable_read_by_every_step_lists_the_first_reads_and_counts_them(
    tmp_path: Path,
) -> None:
    """A generated workflow reading one unmentioned variable in each of 60 steps: one WR308, on
    the first read, with the next MAX_RELATED_READS as related locations and the count in the
    message (thousands of related locations cost the editor on every keystroke, and help nobody)."""
    steps = [
        {
            "id": f"s{i}",
            "title": f"S {i}",
            "prompt": "Do it.",
            "runCondition": {"var": "zq", "equals": 1},
        }
        for i in range(60)
    ]
    workflow = {
        "id": "wide",
        "name": "Wide",
        "description": "d",
        "version": "1.0.0",
        "steps": steps,
    }
    folder = tmp_path / "workflows"
    folder.mkdir()
    (folder / "wide.json").write_text(json.dumps(workflow, indent=2), encoding="utf-8")
    (finding,) = [d for d in _report(str(folder))["wide.json"] if d["code"] == "WR308"]
    assert len(finding["related"]) == MAX_RELATED_READS
    assert f"read 60 times; the first {1 + MAX_RELATED_READS} shown" in finding["message"]
