"""`workrail init --repo`: a team's workflow repository that validates clean as written, whose
pre-commit configuration runs (real pre-commit) the hooks of this project's manifest, and whose
CI job runs `workrail validate`; existing files are kept. Through the `workrail` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WORKRAIL = BIN / "workrail"


def workrail(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKRAIL_HOME": str(cwd.parent / "home"), "NO_COLOR": "1"}
    env.pop("WORKRAIL_WORKFLOW_PATH", None)
    return subprocess.run(
        [str(WORKRAIL), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def scaffold(tmp_path: Path) -> Path:
    repository = tmp_path / "team-workflows"
    repository.mkdir()
    made = workrail(repository, "init", "--repo")
    assert made.returncode == 0, made.stderr
    return repository


def test_the_scaffold_validates_and_is_formatted_as_written(scaffold: Path) -> None:
    files = sorted(str(p.relative_to(scaffold)) for p in scaffold.rglob("*") if p.is_file())
    assert files == [
        ".github/workflows/workrail.yml",
        ".pre-commit-config.yaml",
        "README.md",
        "workflows/team-workflow.json",
    ]
    checked = workrail(scaffold, "validate", "--strict")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1 file passed" in checked.stdout
    formatted = workrail(scaffold, "format", "--check")
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    assert "workflow-repos" in (scaffold / "README.md").read_text()


def test_the_ci_job_runs_validate(scaffold: Path) -> None:
    job = yaml.safe_load((scaffold / ".github" / "workflows" / "workrail.yml").read_text())
    (steps,) = [j["steps"] for j in job["jobs"].values()]
    runs = [s["run"] for s in steps if "run" in s]
    assert any(r.startswith("workrail validate") for r in runs), runs


def test_the_hooks_are_the_manifests(scaffold: Path) -> None:
    manifest = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    (repo,) = yaml.safe_load((scaffold / ".pre-commit-config.yaml").read_text())["repos"]
    assert repo["repo"] == "local"
    keys = ("id", "name", "entry", "files", "exclude", "require_serial")
    # workrail-replay is left to the team: it needs fixtures exported first (docs/cli.md, replay)
    scaffolded = ("workrail-validate", "workrail-format")
    assert [{k: h.get(k) for k in keys} for h in repo["hooks"]] == [
        {k: manifest[hook].get(k) for k in keys} for hook in scaffolded
    ]
    assert set(manifest) == {*scaffolded, "workrail-replay"}


def test_an_existing_file_is_kept(scaffold: Path) -> None:
    (scaffold / "README.md").write_text("ours")
    again = workrail(scaffold, "init", "--repo", "second-flow")
    assert again.returncode == 0, again.stderr
    assert "kept" in again.stderr and (scaffold / "README.md").read_text() == "ours"
    assert json.loads((scaffold / "workflows" / "second-flow.json").read_text())["id"] == (
        "second-flow"
    )


def test_without_name_or_repo_init_is_a_usage_error(tmp_path: Path) -> None:
    done = workrail(tmp_path, "init")
    assert done.returncode == 2 and "--repo" in done.stderr


@pytest.mark.slow
def test_the_pre_commit_config_runs_with_pre_commit(scaffold: Path) -> None:
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(scaffold.parent / "pre-commit-home"),
        "NO_COLOR": "1",
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # `workrail`, as installed
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args, cwd=scaffold, env=env, capture_output=True, text=True, timeout=120, check=False
        )

    run("git", "init", "-q")
    run("git", "add", ".")
    passed = run(str(BIN / "pre-commit"), "run", "--color", "never", "--all-files")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.count("Passed") == 2, passed.stdout
    (scaffold / "workflows" / "broken.json").write_text('{"id": "broken", "steps": 3}\n')
    run("git", "add", ".")
    failed = run(str(BIN / "pre-commit"), "run", "--color", "never", "--all-files")
    assert failed.returncode == 1 and "workflows/broken.json" in failed.stdout, failed.stdout
