"""`[tool.workrail]` / `.workrail/config.toml` honoured by `workrail validate` (the console script)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_fix_cli import run

# Its id differs from its file name: WR601, a warning.
MISNAMED = {
    "id": "other-name",
    "name": "N",
    "version": "1.0.0",
    "steps": [{"id": "one", "title": "One", "prompt": "Do it."}],
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    for number, folder in enumerate(("workflows", "workflows/drafts", "ops/flows")):
        (tmp_path / folder).mkdir(parents=True)
        workflow = {**MISNAMED, "id": f"other-name-{number}"}  # one id per file: no WR603
        (tmp_path / folder / "flow.json").write_text(json.dumps(workflow, indent=2))
    return tmp_path


def codes_by_file(result) -> dict[str, list[str]]:
    data = json.loads(result.stdout)
    return {f["path"]: [d["code"] for d in f["diagnostics"]] for f in data["files"]}


def test_without_configuration_every_warning_shows(repo: Path) -> None:
    found = codes_by_file(run(repo, "validate", "--format", "json", expect=0))
    assert found == {"workflows/flow.json": ["WR601"], "workflows/drafts/flow.json": ["WR601"]}


def test_pyproject_ignore_per_file_ignores_strict_and_workflow_dirs(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.workrail]\nstrict = true\nworkflow-dirs = ["ops/flows"]\n'
        '[tool.workrail.per-file-ignores]\n"workflows/drafts/*" = ["WR6"]\n'
    )
    result = run(repo, "validate", "--format", "json", expect=1)  # strict: a warning fails
    assert codes_by_file(result) == {
        "workflows/flow.json": ["WR601"],
        "workflows/drafts/flow.json": [],
        str(repo / "ops" / "flows" / "flow.json"): ["WR601"],
    }
    # The command line amends the file: --extend-select brings the ignored code back.
    again = run(repo, "validate", "--format", "json", "--extend-select", "WR601")
    assert codes_by_file(again)["workflows/drafts/flow.json"] == ["WR601"]


def test_dot_workrail_config_and_the_nearest_file_wins(repo: Path) -> None:
    (repo / ".workrail").mkdir()
    (repo / ".workrail" / "config.toml").write_text('ignore = ["WR601"]\n')
    (repo / "workflows" / "drafts" / "pyproject.toml").write_text(
        '[tool.workrail]\nselect = ["WR"]\n'
    )
    found = codes_by_file(run(repo, "validate", "--format", "json"))
    assert found == {"workflows/flow.json": [], "workflows/drafts/flow.json": ["WR601"]}


def test_a_bad_configuration_is_a_usage_error_and_nothing_is_written(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.workrail]\nignore = ["WR6O1"]\n')
    before = (repo / "workflows" / "flow.json").read_text()
    result = run(repo, "validate", "--fix", "--unsafe-fixes", expect=2)
    assert f"{repo / 'pyproject.toml'}: 'WR6O1' is no code" in result.stderr
    assert "Traceback" not in result.stderr
    assert (repo / "workflows" / "flow.json").read_text() == before


def test_a_symlinked_file_takes_the_configuration_of_the_directory_it_resolves_to(
    repo: Path,
) -> None:
    """A file that is a symbolic link is configured where its target lies (the directory of each
    plain file is resolved once; a link is resolved itself)."""
    (repo / "ops" / "flows" / "pyproject.toml").write_text('[tool.workrail]\nignore = ["WR601"]\n')
    (repo / "workflows" / "linked.json").symlink_to(repo / "ops" / "flows" / "flow.json")
    (repo / "workflows" / "drafts" / "pyproject.toml").write_text(
        '[tool.workrail]\nignore = ["WR601"]\n'
    )
    (repo / "ops" / "drafts").symlink_to(repo / "workflows" / "drafts")
    found = codes_by_file(
        run(repo, "validate", "--format", "json", "workflows/linked.json", "workflows/flow.json")
    )
    assert found == {"workflows/linked.json": [], "workflows/flow.json": ["WR601"]}
    # a plain file in a symlinked directory: the configuration of the directory linked to
    found = codes_by_file(run(repo, "validate", "--format", "json", "ops/drafts/flow.json"))
    assert found == {"ops/drafts/flow.json": []}


def test_per_file_ignore_star_stays_in_its_folder_and_extend_reads_a_shared_file(
    repo: Path,
) -> None:
    (repo / "shared.toml").write_text(
        'strict = true\n[per-file-ignores]\n"workflows/*" = ["WR601"]\n'
    )
    (repo / ".workrail").mkdir()
    (repo / ".workrail" / "config.toml").write_text('extend = "../shared.toml"\n')
    result = run(repo, "validate", "--format", "json", expect=1)  # strict, from shared.toml
    # `workflows/*` is workflows/flow.json, not workflows/drafts/flow.json (`**` would be both).
    assert codes_by_file(result) == {
        "workflows/flow.json": [],
        "workflows/drafts/flow.json": ["WR601"],
    }
