"""Which files `workrail validate` picks up from files, directories and globs."""

from __future__ import annotations

from pathlib import Path

import pytest

from workrail_engine.cli.discovery import MissingPath, collect_files, project_directories


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in [
        "workflows/a.json",
        "workflows/nested/b.yaml",
        "workflows/c.yml",
        "workflows/notes.md",
        ".workrail/workflows/d.json",
        ".git/objects/e.json",
        "node_modules/pkg/package.json",
        "other/f.workflow.json",
    ]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    return tmp_path


def rel(paths: list[str], root: Path) -> list[str]:
    return [Path(p).relative_to(root).as_posix() for p in paths]


def test_directories_are_walked_for_workflow_suffixes_only(tree: Path) -> None:
    found = collect_files([tree / "workflows"])
    assert rel(found, tree) == ["workflows/a.json", "workflows/c.yml", "workflows/nested/b.yaml"]


def test_hidden_and_vendored_directories_are_skipped_but_dot_workrail_is_not(tree: Path) -> None:
    found = rel(collect_files([tree]), tree)
    assert ".workrail/workflows/d.json" in found
    assert not [p for p in found if p.startswith((".git/", "node_modules/"))]
    assert "other/f.workflow.json" in found


def test_explicit_files_are_kept_whatever_their_suffix_and_only_once(tree: Path) -> None:
    notes = str(tree / "workflows/notes.md")
    a = str(tree / "workflows/a.json")
    assert collect_files([notes, a, a, tree / "workflows" / ".." / "workflows" / "a.json"]) == [notes, a]


def test_globs_are_expanded(tree: Path) -> None:
    found = collect_files([str(tree / "**" / "*.y*ml")])
    assert rel(found, tree) == ["workflows/c.yml", "workflows/nested/b.yaml"]


@pytest.mark.parametrize("argument", ["missing.json", "missing/*.json"])
def test_missing_paths_and_empty_globs_are_usage_errors(tree: Path, argument: str) -> None:
    with pytest.raises(MissingPath, match="missing"):
        collect_files([str(tree / argument)])


def test_project_directories(tree: Path) -> None:
    extra = tree / "other"
    assert project_directories(tree, [extra, tree / "nope"]) == [
        tree / "workflows",
        tree / ".workrail" / "workflows",
        extra,
    ]
    assert project_directories(tree / "other") == []
