"""Project configuration: where it is found, what it selects."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from workrail_engine.project_config import (
    ConfigError,
    ProjectConfig,
    RuleSelection,
    find_config,
    parse_selectors,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "workflows" / "sub").mkdir(parents=True)
    return tmp_path


@pytest.mark.parametrize(
    ("layers", "code", "on"),
    [
        pytest.param([], "WR101", True, id="everything-by-default"),
        pytest.param([(["WR1"], [], [])], "WR601", False, id="select-narrows"),
        pytest.param([(["WR1"], [], ["WR101"])], "WR101", False, id="longer-ignore-wins"),
        pytest.param([(["WR101"], [], ["WR1"])], "WR101", True, id="longer-select-wins"),
        pytest.param(
            [(None, [], ["WR1"]), (["WR101"], [], [])], "WR101", True, id="cli-select-resets"
        ),
        pytest.param(
            [(None, [], ["WR6"]), (None, ["WR601"], [])], "WR601", True, id="extend-select"
        ),
        pytest.param([(["ALL"], [], ["WR6"])], "WR602", False, id="all-then-ignore"),
        pytest.param([(["WR6"], [], ["WR6"])], "WR601", False, id="tie-ignore-wins"),
    ],
)
def test_rule_selection(layers, code, on):
    selection = RuleSelection()
    for select, extend, ignore in layers:
        selection = selection.then(select, extend, ignore)
    assert selection.enabled(code) is on


def test_selectors_split_on_commas_and_refuse_nonsense():
    assert parse_selectors(["wr1, WR601", "WR"], "--select") == ("WR1", "WR601", "WR")
    with pytest.raises(ConfigError, match="'E501' is no code"):
        parse_selectors(["E501"], "--select")


def test_dot_workrail_config_wins_over_pyproject_in_the_same_directory(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.workrail]\nignore = ["WR1"]\n')
    (repo / ".workrail").mkdir()
    (repo / ".workrail" / "config.toml").write_text('ignore = ["WR6"]\nstrict = true\n')
    config = find_config(repo / "workflows" / "sub" / "a.json")
    assert config.path == repo / ".workrail" / "config.toml" and config.strict
    assert config.root == repo
    assert not config.selection.enabled("WR601") and config.selection.enabled("WR101")


def test_pyproject_without_the_table_is_passed_over(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.workrail]\nignore = ["WR6"]\n')
    (repo / "workflows" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(repo / "workflows" / "a.json").path == repo / "pyproject.toml"


def test_the_search_stops_at_the_repository_root(repo: Path) -> None:
    (repo.parent / ".workrail").mkdir(exist_ok=True)
    outside = repo.parent / ".workrail" / "config.toml"
    outside.write_text('ignore = ["WR1"]\n')
    try:
        assert find_config(repo / "workflows" / "a.json") == ProjectConfig()
    finally:
        outside.unlink()


def test_per_file_ignores_and_workflow_dirs_are_relative_to_the_config(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        '[tool.workrail]\nworkflow-dirs = ["ops/flows"]\n'
        '[tool.workrail.per-file-ignores]\n"workflows/sub/*" = ["WR601"]\n"*.draft.json" = ["WR1"]\n'
    )
    config = find_config(repo)
    assert config.workflow_dirs == (repo / "ops" / "flows",)
    assert config.contains_workflow(repo / "ops" / "flows" / "x.json")
    assert not config.selection_for(repo / "workflows" / "sub" / "a.json").enabled("WR601")
    assert config.selection_for(repo / "workflows" / "a.json").enabled("WR601")
    assert not config.selection_for(repo / "elsewhere" / "b.draft.json").enabled("WR102")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("[tool.workrail]\nselct = []\n", "unknown key 'selct'", id="unknown-key"),
        pytest.param(
            '[tool.workrail]\nignore = "WR1"\n', "'ignore' must be a list", id="not-a-list"
        ),
        pytest.param(
            '[tool.workrail]\nstrict = "yes"\n', "'strict' must be true", id="strict-bool"
        ),
        pytest.param("[tool.workrail\n", "cannot be read as TOML", id="bad-toml"),
        pytest.param('[tool.workrail]\nselect = ["X1"]\n', "'X1' is no code", id="bad-code"),
    ],
)
def test_bad_configuration_is_an_error_naming_the_file(repo: Path, text: str, message: str) -> None:
    (repo / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError, match=message) as raised:
        find_config(repo)
    assert str(repo / "pyproject.toml") in str(raised.value)


@pytest.mark.parametrize(
    ("glob", "path", "ignored"),
    [
        pytest.param("workflows/*", "workflows/a.json", True, id="star-within-a-folder"),
        pytest.param("workflows/*", "workflows/sub/a.json", False, id="star-stops-at-slash"),
        pytest.param("workflows/**", "workflows/sub/a.json", True, id="double-star-crosses"),
        pytest.param("**/drafts/*.json", "x/y/drafts/a.json", True, id="leading-double-star"),
        pytest.param("*.draft.json", "workflows/sub/b.draft.json", True, id="name-any-depth"),
        pytest.param("sub/*.json", "workflows/sub/a.json", False, id="slash-anchors-at-root"),
        pytest.param("!workflows/sub/*", "workflows/a.json", True, id="negated-other-file"),
        pytest.param("!workflows/sub/*", "workflows/sub/a.json", False, id="negated-match"),
    ],
)
def test_per_file_ignore_globs_are_gitignore_globs(
    repo: Path, glob: str, path: str, ignored: bool
) -> None:
    (repo / "pyproject.toml").write_text(
        f'[tool.workrail.per-file-ignores]\n"{glob}" = ["WR601"]\n'
    )
    assert (find_config(repo).ignored_for(repo / path) == ("WR601",)) is ignored


def test_globs_are_relative_to_the_config_file_not_the_working_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "workflows" / ".workrail").mkdir()
    (repo / "workflows" / ".workrail" / "config.toml").write_text(
        '[per-file-ignores]\n"sub/*" = ["WR6"]\n'
    )
    monkeypatch.chdir(repo / "workflows" / "sub")
    config = find_config("a.json")
    assert config.ignored_for("a.json") == ("WR6",)
    assert config.ignored_for(repo / "workflows" / "a.json") == ()


def test_extend_layers_the_other_file_under_this_one(repo: Path) -> None:
    shared = repo / "shared"
    shared.mkdir()
    (shared / "base.toml").write_text(
        'ignore = ["WR6"]\nstrict = true\nworkflow-dirs = ["flows"]\n'
        '[per-file-ignores]\n"*.draft.json" = ["WR1"]\n'
    )
    (repo / "pyproject.toml").write_text(
        '[tool.workrail]\nextend = "shared/base.toml"\nextend-select = ["WR601"]\n'
    )
    config = find_config(repo / "workflows" / "a.json")
    assert config.path == repo / "pyproject.toml"
    assert config.selection.enabled("WR601") and not config.selection.enabled("WR602")
    assert config.strict and config.workflow_dirs == (shared / "flows",)
    # The extended file's globs stay relative to its own directory.
    assert config.ignored_for(repo / "workflows" / "x.draft.json") == ("WR1",)


def test_extend_a_select_here_starts_again_and_given_keys_replace(repo: Path) -> None:
    (repo / "base.toml").write_text('ignore = ["WR6"]\nstrict = true\n')
    (repo / "pyproject.toml").write_text(
        '[tool.workrail]\nextend = "base.toml"\nselect = ["WR"]\nstrict = false\n'
    )
    config = find_config(repo)
    assert config.selection.enabled("WR601") and not config.strict


def test_extend_notices_an_edit_of_the_extended_file(repo: Path) -> None:
    base = repo / "base.toml"
    base.write_text('ignore = ["WR6"]\n')
    (repo / "pyproject.toml").write_text('[tool.workrail]\nextend = "base.toml"\n')
    assert not find_config(repo).selection.enabled("WR601")
    base.write_text('ignore = ["WR1"]\n# longer now\n')
    assert find_config(repo).selection.enabled("WR601")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        pytest.param({"a.toml": 'extend = "pyproject.toml"\n'}, "cycle", id="cycle"),
        pytest.param({}, "which cannot be read", id="missing"),
        pytest.param({"a.toml": "extend = 3\n"}, "'extend' must be the path", id="not-a-path"),
    ],
)
def test_bad_extend_is_an_error(repo: Path, files: dict[str, str], message: str) -> None:
    (repo / "pyproject.toml").write_text('[tool.workrail]\nextend = "a.toml"\n')
    for name, text in files.items():
        (repo / name).write_text(text)
    with pytest.raises(ConfigError, match=message):
        find_config(repo)


def test_a_cached_answer_notices_new_fixed_and_removed_files(repo: Path) -> None:
    workflows = repo / "workflows"
    assert find_config(workflows) == ProjectConfig()
    (workflows / ".workrail").mkdir()
    nearer = workflows / ".workrail" / "config.toml"
    nearer.write_text("strict = maybe\n")
    with pytest.raises(ConfigError, match="cannot be read as TOML"):
        find_config(workflows)
    with pytest.raises(ConfigError):  # the error is the answer until the file changes
        find_config(workflows / "a.json")
    nearer.write_text("strict = true\n")
    assert find_config(workflows).strict
    nearer.unlink()
    assert find_config(workflows) == ProjectConfig()


def test_a_broken_file_is_read_once_until_it_changes(repo: Path, monkeypatch) -> None:
    """The error is kept by file (its identity, mtime and size), not read again for every
    directory or request that looks the configuration up."""
    from workrail_engine import project_config

    config = repo / "pyproject.toml"
    config.write_text("# " + "x" * (2 * 1024 * 1024) + "\n[tool.workrail]\n")
    reads: list[object] = []
    real_read = project_config.read_regular_file

    def counted(path, max_bytes):
        reads.append(path)
        return real_read(path, max_bytes)

    monkeypatch.setattr(project_config, "read_regular_file", counted)
    for start in (repo, repo / "workflows", repo / "workflows" / "sub", repo):
        with pytest.raises(ConfigError, match=r"File too large \(2\.0 MiB; the limit is 1 MiB\)"):
            find_config(start)
    assert reads == [config]
    config.write_text("[tool.workrail]\nstrict = true\n")
    assert find_config(repo).strict and len(reads) == 2


def test_a_kept_error_does_not_grow_its_traceback_at_each_raise(repo: Path) -> None:
    (repo / "pyproject.toml").write_text("[tool.workrail]\nstrict = maybe\n")
    depths = []
    for _ in range(3):
        with pytest.raises(ConfigError) as raised:
            find_config(repo)
        depths.append(len(traceback.extract_tb(raised.value.__traceback__)))
    assert depths[0] == depths[-1]


# Relative, absolute, a symlink in the repository that points out, a file outside that is not.
@pytest.mark.parametrize("extend", ["../outside.toml", "{outside}", "link.toml", "../missing.toml"])
def test_extend_must_resolve_inside_the_repository(tmp_path: Path, extend: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    outside = tmp_path / "outside.toml"
    outside.write_text('select = ["SECRET-VALUE"]\n')
    (repo / "link.toml").symlink_to(outside)
    (repo / "pyproject.toml").write_text(
        f'[tool.ruff]\nextend = "x"\n\n[tool.workrail]\nextend = "{extend.format(outside=outside)}"\n'
    )
    with pytest.raises(ConfigError) as raised:
        find_config(repo)
    message = str(raised.value)
    assert message.startswith(f"{repo / 'pyproject.toml'}:5: 'extend' must name a file inside")
    assert "SECRET-VALUE" not in message


def test_extend_inside_the_repository_through_a_parent_folder_is_read(repo: Path) -> None:
    (repo / "shared.toml").write_text('ignore = ["WR6"]\n')
    (repo / "workflows" / ".workrail").mkdir()
    (repo / "workflows" / ".workrail" / "config.toml").write_text('extend = "../../shared.toml"\n')
    assert not find_config(repo / "workflows").selection.enabled("WR601")
