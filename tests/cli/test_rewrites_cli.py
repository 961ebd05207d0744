"""What `workrail validate --fix` and `workrail format` may write, through the console script:
only files inside the project or named on the command line; never an edit saved meanwhile; no
temporary file left behind by a run that was killed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fixable_texts import YAML_FIXED, YAML_TEXT, YAML_UNINDENTED
from test_fix_cli import run

# Its sitecustomize.py is loaded by a `workrail` subprocess with it on PYTHONPATH (see there).
INTERRUPTED_WRITE = os.pathsep.join(
    filter(None, [str(Path(__file__).with_name("interrupted_write")), os.environ.get("PYTHONPATH")])
)
REWRITES = [
    pytest.param(["validate", "--fix"], YAML_TEXT, YAML_FIXED, id="validate-fix"),
    pytest.param(["format"], YAML_UNINDENTED, YAML_TEXT, id="format"),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)  # the configuration search stops here
    (project / "workflows").mkdir()
    return project


def _temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob(".workrail-*.tmp"))


@pytest.mark.parametrize(("command", "before", "after"), REWRITES)
@pytest.mark.parametrize("configured", ["../victim", "~/.config/app"])
def test_a_configured_directory_outside_the_project_is_checked_not_written(
    project: Path, command: list[str], before: str, after: str, configured: str
) -> None:
    # A cloned repository's configuration names a directory of the user's; its YAML file is no
    # workflow of the project and must come out byte for byte as it went in.
    home = project.parent / "home"
    victim = project.parent / "victim" if configured.startswith("..") else home / ".config" / "app"
    victim.mkdir(parents=True)
    (victim / "settings.yaml").write_text(before)
    (project / "pyproject.toml").write_text(f'[tool.workrail]\nworkflow-dirs = ["{configured}"]\n')
    (project / "workflows" / "own.yaml").write_text(before)
    result = run(project, *command, env={"HOME": str(home)})
    assert (victim / "settings.yaml").read_text() == before
    assert (project / "workflows" / "own.yaml").read_text() == after  # the project's own: done
    line = f"{victim / 'settings.yaml'}: not rewritten: it resolves to {victim / 'settings.yaml'},"
    assert result.stderr.count(line) == 1, result.stderr
    assert f"outside the project ({project})" in result.stderr
    # format: a file it could not format (2); validate: the problem left is reported (1).
    assert result.returncode == (2 if command == ["format"] else 1), result.stderr
    # Named on the command line, the same file is the user's choice: written.
    run(project, *command, str(victim / "settings.yaml"), env={"HOME": str(home)})
    assert (victim / "settings.yaml").read_text() == after


@pytest.mark.parametrize(("command", "before", "after"), REWRITES)
def test_a_symlink_in_workflows_leading_out_is_not_written_through(
    project: Path, command: list[str], before: str, after: str
) -> None:
    outside = project.parent / "outside"
    outside.mkdir()
    (outside / "target.yaml").write_text(before)
    link = project / "workflows" / "link.yaml"
    link.symlink_to(Path("..", "..", "outside", "target.yaml"))
    inside = project / "shared.yaml"  # a link to a file of the project stays written through
    inside.write_text(before)
    (project / "workflows" / "inside.yaml").symlink_to(inside)
    for arguments in ([], ["workflows"]):
        result = run(project, *command, *arguments)
        assert (outside / "target.yaml").read_text() == before
        assert "workflows/link.yaml: not rewritten: it resolves to" in result.stderr
        assert inside.read_text() == after
        inside.write_text(before)
    assert link.is_symlink()


@pytest.mark.parametrize(("command", "before", "after"), REWRITES)
def test_an_edit_saved_while_rewriting_is_kept(
    project: Path, command: list[str], before: str, after: str
) -> None:
    path = project / "workflows" / "flow.yaml"
    path.write_text(before)
    saved = before.replace("Do it.", "Do it now, as just saved.")
    interrupted = {
        "PYTHONPATH": INTERRUPTED_WRITE,
        "WORKRAIL_TEST_AT_FSYNC": "save",
        "WORKRAIL_TEST_SAVE_PATH": str(path),
        "WORKRAIL_TEST_SAVE_TEXT": saved,
    }
    result = run(project, *command, env=interrupted)
    assert path.read_text() == saved
    message = "changed while formatting" if command == ["format"] else "changed while fixing"
    assert f"workflows/flow.yaml: not rewritten: it {message}; run again" in result.stderr
    assert _temporaries(path.parent) == []
    run(project, *command)
    assert path.read_text() == after.replace("Do it.", "Do it now, as just saved.")


@pytest.mark.parametrize(("command", "before", "after"), REWRITES)
def test_a_run_killed_mid_write_leaves_no_temporary_file_after_the_next(
    project: Path, command: list[str], before: str, after: str
) -> None:
    flows = project / "workflows"
    (flows / "flow.yaml").write_text(before)
    interrupted = {"PYTHONPATH": INTERRUPTED_WRITE, "WORKRAIL_TEST_AT_FSYNC": "kill"}
    assert run(project, *command, env=interrupted).returncode == -9
    assert len(_temporaries(flows)) == 1  # what the kill left
    assert (flows / "flow.yaml").read_text() == before  # the old file whole
    run(project, *command)
    assert _temporaries(flows) == []
    assert (flows / "flow.yaml").read_text() == after
