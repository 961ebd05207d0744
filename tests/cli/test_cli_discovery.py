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
    assert collect_files([notes, a, a, tree / "workflows" / ".." / "workflows" / "a.json"]) == [
        notes,
        a,
    ]


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


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A checkout: workflows among files that are JSON/YAML but no workflows."""
    from workrail_engine.schema import SCHEMA_ID

    files = {
        "package.json": '{"name": "pkg"}',
        "tsconfig.json": "{}",
        ".pre-commit-hooks.yaml": "- id: hook\n",
        "schema/workflow.schema.json": f'{{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "{SCHEMA_ID}"}}',
        "docs/mine.json": f'{{"$schema": "{SCHEMA_ID}", "id": "mine"}}',
        "docs/mine.yaml": f"$schema: {SCHEMA_ID}\nid: mine\n",
        "docs/release.workflow.yml": "id: release\n",
        "workflows/a.json": "{}",
        ".workrail/workflows/b.json": "{}",
        ".venv/lib/workflows/c.json": "{}",
        "node_modules/x/workflows/d.json": "{}",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


REPOSITORY_WORKFLOWS = [
    ".workrail/workflows/b.json",
    "docs/mine.json",
    "docs/mine.yaml",
    "docs/release.workflow.yml",
    "workflows/a.json",
]


def test_a_walked_directory_yields_only_workflow_files(repository: Path) -> None:
    assert rel(collect_files([repository]), repository) == REPOSITORY_WORKFLOWS


def test_the_rule_reads_below_the_directory_walked(repository: Path, tmp_path_factory) -> None:
    # A checkout that lives inside some folder called workflows is not all workflows.
    outer = tmp_path_factory.mktemp("outer") / "workflows" / "checkout"
    outer.parent.mkdir()
    repository.rename(outer)
    assert rel(collect_files([outer]), outer) == REPOSITORY_WORKFLOWS


def test_walking_the_current_directory_from_the_repository_root(
    repository: Path, monkeypatch
) -> None:
    monkeypatch.chdir(repository)
    assert [Path(p).as_posix() for p in collect_files(["."])] == REPOSITORY_WORKFLOWS


def test_a_workflows_directory_walked_counts_every_json_and_yaml_file(
    tree: Path, monkeypatch
) -> None:
    (tree / "workflows" / "plain.json").write_text("{}")
    assert "workflows/plain.json" in rel(collect_files([tree / "workflows"]), tree)
    monkeypatch.chdir(tree / "workflows")
    assert "plain.json" in [Path(p).as_posix() for p in collect_files(["."])]
    (tree / "workflows" / "nested" / "plain.json").write_text("{}")
    monkeypatch.chdir(tree)
    assert collect_files(["workflows/nested"]) == [
        "workflows/nested/b.yaml",
        "workflows/nested/plain.json",
    ]


def test_sources_count_every_json_and_yaml_file(tree: Path) -> None:
    assert rel(collect_files([tree / "other"]), tree) == ["other/f.workflow.json"]
    (tree / "other" / "plain.json").write_text("{}")
    assert "other/plain.json" not in rel(collect_files([tree / "other"]), tree)
    assert "other/plain.json" in rel(collect_files([tree / "other"], sources=True), tree)


def test_a_file_reached_twice_through_symbolic_links_is_checked_once(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files are told apart by their real path: through a linked directory or a linked file."""
    monkeypatch.chdir(tree)
    (tree / "linked-dir").symlink_to(tree / "workflows")
    (tree / "workflows" / "nested" / "link.json").symlink_to(tree / "workflows" / "a.json")
    (tree / "workflows" / "nested" / "dangling.json").symlink_to(tree / "nowhere.json")
    found = collect_files(
        [
            tree / "workflows" / "a.json",
            tree / "linked-dir" / "a.json",
            tree / "workflows",
            "linked-dir/c.yml",
        ]
    )
    assert rel(found, tree) == [
        "workflows/a.json",
        "workflows/c.yml",
        "workflows/nested/b.yaml",
        "workflows/nested/dangling.json",
    ]
