"""`workrail validate` in-process: exit codes, the text format, unreadable input, default sources."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

# The bad file of the snapshot test: line 5 has an error after non-ASCII text (an umlaut, which
# takes one terminal cell, and two CJK characters, which take two each).
BAD = """{
  "id": "bad",
  "name": "Bad",
  "steps": [
    {"id": "go-on", "title": "Schritt für Schritt 日本", "prompt": 7}
  ]
}
"""
BAD_LINE = BAD.splitlines()[4]


def test_text_format_snapshot_of_a_bad_file(invoke, workflows, tmp_path: Path) -> None:
    path = workflows.write(tmp_path, "bad.json", BAD)
    out = invoke(["validate", str(path)], expect=1).stdout.splitlines()
    column = BAD_LINE.index("7") + 1  # 1-based, in code points
    head = [i for i, line in enumerate(out) if line.startswith(f"{path}:5:{column}: ")]
    assert head, "\n".join(out)
    assert re.match(rf"{re.escape(str(path))}:5:{column}: WR1\d\d .*prompt", out[head[0]]), out[
        head[0]
    ]
    # Display columns: "日本" are two cells each, so the caret is two cells right of the code-point column.
    assert out[head[0] + 1 : head[0] + 4] == [
        "  |",
        f"5 | {BAD_LINE}",
        "  | " + " " * (column - 1 + 2) + "^ error",
    ]
    assert out[-1] == "Found 1 error in 1 file (1 file checked)"


def test_code_frame_under_a_multi_character_value(invoke, workflows, tmp_path: Path) -> None:
    doc = workflows.good("wrong-version")
    doc["version"] = "one"
    path = workflows.write(tmp_path, "wrong-version.json", doc)
    out = invoke(["validate", str(path)], expect=1).stdout.splitlines()
    text = path.read_text().splitlines()
    line = next(i for i, t in enumerate(text) if '"version"' in t)
    column = text[line].index('"one"')
    head = next(i for i, o in enumerate(out) if o.startswith(f"{path}:{line + 1}:{column + 1}: "))
    assert out[head + 3] == "  | " + " " * column + "^^^^^ error", "\n".join(out)


@pytest.mark.parametrize(
    ("files", "options", "code", "last_line"),
    [
        pytest.param({"good-flow.json": "good"}, [], 0, "1 file passed", id="clean"),
        pytest.param(
            {"a-flow.json": "good", "b-flow.json": "good"},
            [],
            0,
            "All 2 files passed",
            id="clean-two",
        ),
        pytest.param(
            {"other.json": "good"},
            [],
            0,
            "Found 1 warning in 1 file (1 file checked)",
            id="warnings-only-pass",
        ),
        pytest.param(
            {"other.json": "good"},
            ["--strict"],
            1,
            "Found 1 warning in 1 file (1 file checked)",
            id="strict-warnings-fail",
        ),
        pytest.param(
            {"bad.json": BAD, "good-flow.json": "good"},
            [],
            1,
            "Found 1 error in 1 file (2 files checked)",
            id="errors",
        ),
    ],
)
def test_exit_codes_and_summary(
    invoke, workflows, tmp_path: Path, files, options, code, last_line
) -> None:
    for name, content in files.items():
        workflows.write(
            tmp_path / "workflows",
            name,
            workflows.good(Path(name).stem) if content == "good" else content,
        )
    if "other.json" in files:  # its id ("other") is fine, but make it differ from the file name
        workflows.write(tmp_path / "workflows", "other.json", workflows.good("not-other"))
    result = invoke(["validate", str(tmp_path / "workflows"), *options], expect=code)
    lines = result.stdout.splitlines()
    if "other.json" in files:  # WR601's fix (renaming the id) is unsafe: ruff's hint follows
        assert lines[-1] == "1 unsafe fix available with `--fix --unsafe-fixes`."
        lines.pop()
    assert lines[-1] == last_line


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["validate", "does-not-exist.json"], id="missing-path"),
        pytest.param(["validate", "nothing-here-*.json"], id="glob-matching-nothing"),
        pytest.param(["validate", "--format", "xml", "."], id="bad-format"),
        pytest.param(["validate", "--no-such-option"], id="unknown-option"),
        pytest.param(["frobnicate"], id="unknown-command"),
        pytest.param(["--project", "no-such-project-dir", "validate"], id="missing-project"),
        pytest.param(["--workflows", "no-such-dir", "list"], id="missing-workflows-dir"),
    ],
)
def test_usage_errors_exit_2(invoke, args) -> None:
    result = invoke(args, expect=2)
    assert "Error" in result.stderr and "Traceback" not in result.output


def test_missing_path_is_reported_before_anything_is_checked(
    invoke, workflows, tmp_path: Path
) -> None:
    good = workflows.write(tmp_path, "good-flow.json", workflows.good())
    result = invoke(["validate", str(good), str(tmp_path / "missing.json")], expect=2)
    assert "missing.json: no such file or directory" in result.stderr
    assert result.stdout == ""


def deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A workflows directory: `workrail validate` checks every JSON/YAML file in it."""
    path = tmp_path / "workflows"
    path.mkdir()
    return path


UNREADABLE = {
    "empty.json": b"",
    "latin1.json": '{"id": "caf\xe9"}'.encode("latin-1"),
    "binary.json": b"\x00\x01\x02\xff" * 64,
    "huge.json": b'{"id": "huge", "pad": "' + b"x" * (10 * 1024 * 1024) + b'"}',
    "deep.json": deep_json(10_000).encode(),
    "deep.yaml": ("- " * 10_000 + "x\n").encode(),
}


def test_unreadable_files_get_a_diagnostic_and_the_run_goes_on(
    invoke, workflows, folder: Path
) -> None:
    for name, data in UNREADABLE.items():
        (folder / name).write_bytes(data)
    workflows.write(folder, "zz-good.json", workflows.good("zz-good"))
    result = invoke(["validate", str(folder), "--format", "json"], expect=1)
    report = {Path(f["path"]).name: f["diagnostics"] for f in json.loads(result.stdout)["files"]}
    assert sorted(report) == sorted([*UNREADABLE, "zz-good.json"])
    for name in UNREADABLE:
        assert any(
            d["severity"] == "error" and d["code"].startswith("WR0") for d in report[name]
        ), (name, report[name])
    assert report["zz-good.json"] == []


def test_not_utf8_points_at_the_bad_byte(invoke, tmp_path: Path) -> None:
    (tmp_path / "latin1.json").write_bytes('{\n  "id": "caf\xe9"\n}\n'.encode("latin-1"))
    out = invoke(["validate", str(tmp_path / "latin1.json")], expect=1).stdout
    assert re.search(r"latin1\.json:2:13: WR0\d\d ", out), out


def test_default_sources_are_the_project_directories(invoke, workflows, tmp_path: Path) -> None:
    workflows.write(tmp_path / "workflows", "good-flow.json", workflows.good())
    workflows.write(tmp_path / ".workrail" / "workflows", "bad.json", BAD)
    result = invoke(["--project", str(tmp_path), "validate"], expect=1)
    assert "Found 1 error in 1 file (2 files checked)" in result.stdout


def test_extra_workflow_directories_are_validated_by_default(
    invoke, workflows, tmp_path: Path
) -> None:
    workflows.write(tmp_path / "extra", "good-flow.json", workflows.good())
    result = invoke(
        ["--project", str(tmp_path), "--workflows", str(tmp_path / "extra"), "validate"]
    )
    assert result.stdout.strip() == "1 file passed"


def test_no_project_directories_gives_a_clear_message(invoke, tmp_path: Path) -> None:
    result = invoke(["--project", str(tmp_path), "validate"], expect=0)
    assert "no workflow directory found" in result.stderr
    assert str(tmp_path / "workflows") in result.stderr


@pytest.mark.parametrize(
    ("env", "options", "coloured"),
    [
        pytest.param({}, [], False, id="not-a-terminal"),
        pytest.param({}, ["--color", "always"], True, id="forced"),
        pytest.param({"NO_COLOR": "1"}, ["--color", "auto"], False, id="no-color"),
        pytest.param({"NO_COLOR": "1"}, ["--color", "always"], True, id="forced-beats-no-color"),
    ],
)
def test_colour(invoke, workflows, tmp_path: Path, env, options, coloured) -> None:
    path = workflows.write(tmp_path, "bad.json", BAD)
    result = invoke(["validate", str(path), *options], expect=1, env=env)
    assert ("\x1b[" in result.stdout) is coloured, result.stdout


def test_two_files_with_one_workflow_id(invoke, workflows, tmp_path: Path) -> None:
    first = workflows.write(tmp_path / "workflows", "same-flow.json", workflows.good("same-flow"))
    second = workflows.write(
        tmp_path / ".workrail" / "workflows", "same-flow.json", workflows.good("same-flow")
    )
    out = invoke(["--project", str(tmp_path), "validate"], expect=1).stdout
    assert f"{first}:2:9: WR603 " in out and f"{second}:2:9: WR603 " in out, out
    assert f"({second}:2:9)" in out and f"({first}:2:9)" in out, (
        "each note points at the other file"
    )
    assert out.splitlines()[-1] == "Found 2 errors in 2 files (2 files checked)"
    sarif = json.loads(
        invoke(["--project", str(tmp_path), "validate", "--format", "sarif"], expect=1).stdout
    )
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["WR603", "WR603"]
    for result, other in zip(results, (second, first), strict=True):
        (place,) = result["relatedLocations"]
        assert place["physicalLocation"]["artifactLocation"]["uri"] == other.as_uri()
        assert place["physicalLocation"]["region"]["startLine"] == 2


def test_lone_surrogate_escapes_do_not_stop_the_run(invoke, workflows, folder: Path) -> None:
    # "\ud800" is legal JSON syntax but no encoder can write it; whatever the engine makes of it,
    # the file gets an error diagnostic, the output stays valid UTF-8 and the next file is checked.
    (folder / "odd.json").write_text('{"id": "\\ud800x", "name": "\\udfff", "steps": []}')
    workflows.write(folder, "zz-good.json", workflows.good("zz-good"))
    for fmt in ("text", "json"):
        result = invoke(["validate", str(folder), "--format", fmt], expect=1)
        result.stdout_bytes.decode("utf-8")  # strict: raises on anything but valid UTF-8
        assert "Traceback" not in result.output
    report = {Path(f["path"]).name: f["diagnostics"] for f in json.loads(result.stdout)["files"]}
    assert any(d["severity"] == "error" for d in report["odd.json"])
    assert report["zz-good.json"] == []


def test_file_names_that_are_not_utf8(invoke, workflows, folder: Path) -> None:
    import os

    name = os.fsdecode(b"bad\xffname.json")  # a surrogate-escaped str, as os.listdir returns it
    workflows.write(folder, name, workflows.good("other-id"))
    result = invoke(["validate", str(folder), "--format", "json"], expect=0)
    data = json.loads(result.stdout_bytes.decode("utf-8"))
    assert Path(data["files"][0]["path"]).name == "bad\ufffdname.json"
    assert data["summary"]["warnings"] == 1  # the id differs from the file name


def test_an_engine_failure_on_one_file_becomes_wr000(
    invoke, workflows, folder: Path, monkeypatch
) -> None:
    # Simulated engine bug (a real one gets fixed, which would leave this path untested).
    import workrail_engine.lint.schema_errors as schema_errors

    real = schema_errors.schema_diagnostics

    def failing(doc):
        if Path(doc.path).name == "boom.json":
            raise RuntimeError("simulated engine bug")
        return real(doc)

    monkeypatch.setattr(schema_errors, "schema_diagnostics", failing)
    workflows.write(folder, "boom.json", workflows.good("boom"))
    workflows.write(folder, "fine.json", workflows.good("fine"))
    out = invoke(["validate", str(folder)], expect=1).stdout
    assert (
        f"{folder / 'boom.json'}:1:1: WR000 The checker failed on this file (RuntimeError: simulated engine bug)"
        in out
    )
    assert out.splitlines()[-1] == "Found 1 error in 1 file (2 files checked)"


def test_a_directory_is_searched_for_workflow_files_only(invoke, workflows, tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "pkg", "version": "1.0.0"}')
    (tmp_path / ".pre-commit-hooks.yaml").write_text("- id: hook\n")
    good = workflows.write(tmp_path / "workflows", "good-flow.json", workflows.good())
    result = invoke(["validate", str(tmp_path), "--format", "json"])
    assert [f["path"] for f in json.loads(result.stdout)["files"]] == [str(good)]
    named = invoke(["validate", str(tmp_path / "package.json")], expect=1)  # named: always checked
    assert "package.json" in named.stdout


def test_a_directory_without_workflow_files_says_what_counts(invoke, tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    result = invoke(["validate", str(tmp_path)])
    assert "no workflow files found" in result.stderr and "*.workflow.json" in result.stderr
