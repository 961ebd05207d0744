"""`workrail validate` with ruff's habits, through the installed console script: --fix, --diff,
--unsafe-fixes, standard input, --select/--ignore/--extend-select, --quiet, --exit-zero,
--statistics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixable_texts import JSON_TEXT, YAML_FIXED, YAML_TEXT

WORKRAIL = Path(sys.executable).with_name("workrail")


def run(
    cwd: Path,
    *args: str,
    stdin: str | None = None,
    expect: int | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(WORKRAIL), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        input=stdin,
        env={**os.environ, "WORKRAIL_HOME": str(cwd / ".home"), "NO_COLOR": "1", **(env or {})},
    )
    if expect is not None:
        assert result.returncode == expect, (
            f"`workrail {' '.join(args)}` exited {result.returncode}, expected {expect}\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
        )
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the configuration search stops here
    flows = tmp_path / "workflows"
    flows.mkdir()
    (flows / "broken.json").write_text(JSON_TEXT)
    (flows / "yaml-flow.yaml").write_text(YAML_TEXT)
    return tmp_path


def test_without_fix_the_safe_fixes_are_counted(project: Path) -> None:
    result = run(project, "validate", expect=1)
    assert result.stdout.splitlines()[-1] == "[*] 2 fixable with `--fix`."
    assert (project / "workflows" / "broken.json").read_text() == JSON_TEXT
    # Only unsafe fixes left (the commas fixed): --unsafe-fixes alone makes the hint count them
    # (ruff's habit) and writes nothing.
    no_commas = JSON_TEXT.replace(",],}", "]}")
    (project / "workflows" / "broken.json").write_text(no_commas)
    hint = run(project, "validate", "workflows/broken.json", expect=1).stdout.splitlines()[-1]
    assert hint == "2 unsafe fixes available with `--fix --unsafe-fixes`."
    unsafe = run(project, "validate", "--unsafe-fixes", "workflows/broken.json", expect=1)
    assert unsafe.stdout.splitlines()[-1] == "[*] 2 fixable with `--fix`."
    assert (project / "workflows" / "broken.json").read_text() == no_commas


def test_fix_applies_safe_fixes_in_place_and_keeps_yaml_comments(project: Path) -> None:
    result = run(project, "validate", "--fix", expect=1)
    broken = json.loads((project / "workflows" / "broken.json").read_text())
    assert broken["steps"][0]["promt"] == "p"  # an unsafe fix: not applied
    assert (project / "workflows" / "yaml-flow.yaml").read_text() == YAML_FIXED
    lines = result.stdout.splitlines()
    # 2 trailing commas + the YAML boolean fixed; 'promt' (WR102, WR103) and the id's length remain.
    assert "Found 6 problems (3 fixed, 3 remaining)" in lines
    assert lines[-1] == "2 unsafe fixes available with `--fix --unsafe-fixes`."
    assert "WR102" in result.stdout and "WR106" in result.stdout and "WR001" not in result.stdout


def test_fix_exits_0_when_nothing_remains(project: Path) -> None:
    (project / "workflows" / "broken.json").unlink()
    result = run(project, "validate", "--fix", expect=0)
    assert result.stdout == "Found 1 problem (1 fixed, 0 remaining)\n"


def test_unsafe_fixes_only_when_asked(project: Path) -> None:
    run(project, "validate", "--fix", "--unsafe-fixes", expect=1)
    broken = json.loads((project / "workflows" / "broken.json").read_text())
    assert broken["steps"][0] == {"id": "s", "title": "T", "prompt": "p"}


def test_diff_shows_the_fixes_and_writes_nothing(project: Path) -> None:
    result = run(project, "validate", "--diff", expect=1)
    assert "--- workflows/yaml-flow.yaml\n+++ workflows/yaml-flow.yaml\n" in result.stdout
    assert '-name: no   # YAML reads this as false\n+name: "no"   # YAML' in result.stdout
    assert result.stderr == "Would fix 3 problems.\n"
    assert (project / "workflows" / "yaml-flow.yaml").read_text() == YAML_TEXT
    clean = run(project, "validate", "--diff", "workflows/yaml-flow.yaml", "--select", "WR6")
    assert clean.returncode == 0 and clean.stdout == ""


def test_stdin_with_a_file_name_for_messages_and_file_type(project: Path) -> None:
    result = run(
        project,
        "validate",
        "-",
        "--stdin-filename",
        "drafts/yaml-flow.yaml",
        stdin=YAML_TEXT,
        expect=1,
    )
    assert result.stdout.startswith("drafts/yaml-flow.yaml:3:7: WR101 ")  # read as YAML, named so
    fixed = run(
        project, "validate", "--fix", "-", "--stdin-filename", "yaml-flow.yml", stdin=YAML_TEXT
    )
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == YAML_FIXED  # the text on stdout
    assert "Found 1 problem (1 fixed, 0 remaining)" in fixed.stderr  # the report on stderr
    plain = run(project, "validate", "-", stdin=JSON_TEXT, expect=1)
    assert plain.stdout.startswith("-:1:")  # no name: "-", read as JSON


def test_stdin_cannot_be_mixed_with_paths(project: Path) -> None:
    result = run(project, "validate", "-", "workflows", stdin="{}", expect=2)
    assert "cannot be mixed" in result.stderr


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        pytest.param(["--select", "WR1"], {"WR102", "WR103", "WR106"}, id="select-prefix"),
        pytest.param(["--select", "WR1", "--ignore", "WR106,WR103"], {"WR102"}, id="ignore-longer"),
        pytest.param(["--select", "WR102,WR106"], {"WR102", "WR106"}, id="comma-list"),
        pytest.param(["--ignore", "WR1", "--extend-select", "WR106"], {"WR106"}, id="extend"),
    ],
)
def test_select_ignore_extend_select(project: Path, options: list[str], codes: set[str]) -> None:
    (project / "workflows" / "broken.json").write_text(JSON_TEXT.replace(",],}", "]}"))
    result = run(project, "validate", "workflows/broken.json", "--format", "json", *options)
    found = {d["code"] for d in json.loads(result.stdout)["files"][0]["diagnostics"]}
    assert found == codes


def test_a_bad_selector_is_a_usage_error(project: Path) -> None:
    result = run(project, "validate", "--select", "E501", expect=2)
    assert "'E501' is no code or code prefix" in result.stderr


def test_quiet_exit_zero_and_statistics(project: Path) -> None:
    quiet = run(project, "validate", "--quiet", "--exit-zero", expect=0)
    assert "WR001" in quiet.stdout and "Found" not in quiet.stdout and "fixable" not in quiet.stdout
    stats = run(project, "validate", "--statistics", expect=1)
    assert stats.stdout == (
        "1\tWR001\t[*] syntax-error\n1\tWR101\t[*] wrong-type\n"
        "Found 2 errors in 2 files (2 files checked)\n[*] 2 fixable with `--fix`.\n"
    )
    stats_json = json.loads(run(project, "validate", "--statistics", "--format", "json").stdout)
    assert stats_json[0] == {
        "code": "WR001",
        "name": "syntax-error",
        "count": 1,
        "fixable": True,
        "fixable_count": 1,
        "severity": "error",
    }


def test_statistics_sorted_by_count_with_names_and_unfixable_marks(project: Path) -> None:
    (project / "workflows" / "broken.json").write_text(JSON_TEXT.replace(",],}", "]}"))
    (project / "workflows" / "other.json").write_text(
        JSON_TEXT.replace(",],}", "]}").replace('"broken"', '"other-broken"')
    )
    stats = run(project, "validate", "--statistics", "-q", expect=1).stdout.splitlines()
    # WR102 `promt` twice (its fix, a guess, is unsafe: `[ ]` without --unsafe-fixes), then
    # the rest by count and code.
    assert stats[0] == "2\tWR102\t[ ] unknown-property"
    assert [line.split("\t")[0] for line in stats] == sorted(
        (line.split("\t")[0] for line in stats), key=lambda n: -int(n)
    )
    assert (
        "1\tWR101\t[*] wrong-type" in stats and "1\tWR601\t[ ] id-differs-from-file-name" in stats
    )
    unsafe = run(project, "validate", "--statistics", "-q", "--unsafe-fixes", expect=1)
    assert unsafe.stdout.splitlines()[0] == "2\tWR102\t[*] unknown-property"


def promt_file(project: Path) -> str:
    """A file whose only fixes are unsafe: the misspelt `promt` (commas gone, it parses)."""
    (project / "workflows" / "promt.json").write_text(
        JSON_TEXT.replace(",],}", "]}").replace('"broken"', '"promt"')
    )
    return "workflows/promt.json"


def test_json_and_sarif_say_which_fix_applies_and_how_safe(project: Path) -> None:
    text = (project / "workflows" / "broken.json").read_text()
    promt = promt_file(project)
    args = ("validate", "workflows/broken.json", promt)
    data = json.loads(run(project, *args, "--format", "json").stdout)
    by_code = {d["code"]: d for f in data["files"] for d in f["diagnostics"]}
    comma = by_code["WR001"]
    assert comma["name"] == "syntax-error" and comma["fix"]["applicability"] == "safe"
    (edit,) = comma["fix"]["edits"]
    assert edit["content"] == "" and edit["location"]["row"] == 1
    assert text[edit["location"]["column"] - 1 : edit["end_location"]["column"] - 1] == ","
    rename = by_code["WR102"]["fix"]
    assert rename["applicability"] == "unsafe" and "prompt" in rename["message"]
    assert data["summary"]["fixable"] == 1 and data["summary"]["unsafeFixable"] >= 1
    sarif = json.loads(run(project, *args, "--format", "sarif").stdout)
    (sarif_run,) = sarif["runs"]
    by_rule = {r["ruleId"]: r for r in sarif_run["results"]}
    (fix,) = by_rule["WR001"]["fixes"]
    assert fix["properties"]["applicability"] == "safe"
    ((replacement,),) = [c["replacements"] for c in fix["artifactChanges"]]
    region = replacement["deletedRegion"]
    assert text[region["charOffset"] : region["charOffset"] + region["charLength"]] == ","
    assert "insertedContent" not in replacement  # a deletion, as ruff writes one
    assert by_rule["WR102"]["fixes"][0]["properties"]["applicability"] == "unsafe"
    assert {"id": "WR102", "name": "unknown-property"} in sarif_run["tool"]["driver"]["rules"]


def test_text_marks_what_fix_would_fix(project: Path) -> None:
    promt = promt_file(project)
    heads = [
        line
        for line in run(project, "validate", "workflows/broken.json", promt).stdout.splitlines()
        if line.startswith("workflows/")
    ]
    assert any(": WR001 [*] " in line for line in heads)
    assert any(": WR102 " in line and "[*]" not in line for line in heads)  # unsafe
