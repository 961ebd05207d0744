"""`workrail init`: a valid starting workflow, never overwriting, names checked."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from workrail_engine.cli.scaffold import current_umask
from workrail_engine.schema import SCHEMA_ID


def test_init_writes_a_workflow_that_passes_validate_strictly(invoke, tmp_path: Path) -> None:
    result = invoke(["--project", str(tmp_path), "init", "release-checklist"])
    path = tmp_path / "workflows" / "release-checklist.json"
    assert f"Created {path}" in result.stdout
    data = json.loads(path.read_text())
    assert data["$schema"] == SCHEMA_ID and data["id"] == "release-checklist"
    checked = invoke(["validate", "--strict", str(path)])
    assert checked.stdout.strip() == "1 file passed"
    listed = json.loads(invoke(["--project", str(tmp_path), "list", "--format", "json"]).stdout)
    assert any(e["id"] == "release-checklist" and e["source"] == "project" for e in listed)


def test_init_into_a_chosen_directory(invoke, tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    invoke(["init", "my-flow", "--dir", str(tmp_path / "a" / "b")])
    assert (tmp_path / "a" / "b" / "my-flow.json").is_file()
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == ["my-flow.json"], (
        "no temporary file left"
    )


def test_init_never_overwrites(invoke, tmp_path: Path) -> None:
    target = tmp_path / "workflows" / "mine.json"
    target.parent.mkdir()
    target.write_text("precious")
    result = invoke(["--project", str(tmp_path), "init", "mine"], expect=1)
    assert "already exists" in result.stderr
    assert target.read_text() == "precious"


@pytest.mark.parametrize("name", ["My_Flow", "ab", "x" * 65, "../escape", "with space", "dir/name"])
def test_init_rejects_names_that_are_not_workflow_ids(invoke, tmp_path: Path, name: str) -> None:
    result = invoke(["--project", str(tmp_path), "init", name], expect=2)
    assert "is not a name for a new workflow" in result.stderr
    assert not (tmp_path / "workflows").exists()


@pytest.mark.parametrize(
    ("name", "suggested"),
    [
        pytest.param("my_flow", "my-flow", id="underscore"),
        pytest.param("team.flow", "team-flow", id="namespaced"),
        pytest.param("Release Checklist", "release-checklist", id="words"),
    ],
)
def test_init_refuses_what_docs_do_not_allow_and_suggests_a_name(
    invoke, tmp_path: Path, name: str, suggested: str
) -> None:
    result = invoke(["--project", str(tmp_path), "init", name], expect=2)
    assert f"(did you mean {suggested!r}?)" in result.stderr
    assert "lower-case letters, digits and '-', 3-64 characters" in result.stderr
    assert not (tmp_path / "workflows").exists()
    invoke(["init", suggested, "--project", str(tmp_path)])  # --project after the command too
    written = json.loads((tmp_path / "workflows" / f"{suggested}.json").read_text())
    assert written["name"] == suggested.replace("-", " ").capitalize()


def test_init_does_not_create_a_missing_dir(invoke, tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "dir"
    result = invoke(["init", "my-flow", "--dir", str(missing)], expect=2)
    assert "--dir" in result.stderr and "does not exist" in result.stderr
    assert not (tmp_path / "nonexistent").exists()


@pytest.fixture
def umask():
    """Set the process umask for one test, then put the old one back."""
    saved = os.umask(0o022)
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_init_honours_the_umask(invoke, tmp_path: Path, umask, mask: int, mode: int) -> None:
    umask(mask)
    invoke(["--project", str(tmp_path), "init", "my-flow"])
    assert stat.S_IMODE((tmp_path / "workflows" / "my-flow.json").stat().st_mode) == mode
    assert current_umask() == mask, "reading the umask leaves it as it was"
