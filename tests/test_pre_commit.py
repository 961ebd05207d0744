"""The `workrail-validate` hook through the real pre-commit (`pre-commit try-repo`).

try-repo installs this repository into a fresh virtual environment of pre-commit's own (a temp
store per call; uncommitted changes to tracked files are included through a shadow commit), so
each run pip-installs the project. The pip cache under /tmp is shared between runs to keep that
fast; PyPI must be reachable for the first one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from system_packages import require

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
CACHE = Path(os.environ.get("WORKRAIL_TEST_CACHE", "/tmp/workrail-test-cache"))

GOOD = {
    "id": "good",
    "name": "Good",
    "version": "1.0.0",
    "steps": [{"id": "only", "title": "Only step", "prompt": "Do the thing."}],
}
BAD_TEXT = """{
  "id": "bad",
  "name": "Bad",
  "steps": [
    {"id": "only", "title": 42, "prompt": "Do the thing."}
  ]
}
"""


def hook_selects(path: str) -> bool:
    """pre-commit's rule: `files` and `exclude` are searched (re.search) in repository paths."""
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in manifest if h["id"] == "workrail-validate"]
    assert hook["entry"] == "workrail validate" and hook["language"] == "python"
    excluded = "exclude" in hook and re.search(hook["exclude"], path)
    return bool(re.search(hook["files"], path)) and not excluded


@pytest.mark.parametrize(
    ("path", "selected"),
    [
        pytest.param("workflows/a.json", True, id="workflows-dir"),
        pytest.param("workflows/sub/b.yaml", True, id="nested"),
        pytest.param("pkg/workflows/c.yml", True, id="workflows-dir-deeper"),
        pytest.param(".workrail/workflows/d.json", True, id="dot-workrail"),
        pytest.param("docs/release.workflow.json", True, id="suffix-anywhere"),
        pytest.param("x.workflow.yaml", True, id="suffix-yaml"),
        pytest.param("workflows/README.md", False, id="not-a-data-file"),
        pytest.param("myworkflows/a.json", False, id="directory-name-must-match-whole"),
        pytest.param("package.json", False, id="other-json"),
        pytest.param(".github/workflows/ci.yml", False, id="github-actions-workflows-are-not-ours"),
        pytest.param("sub/.github/workflows/ci.yaml", False, id="nested-github-actions"),
    ],
)
def test_files_pattern(path: str, selected: bool) -> None:
    assert hook_selects(path) is selected


def test_manifest_is_valid_for_pre_commit() -> None:
    result = subprocess.run(
        [str(PRE_COMMIT), "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    require("git")
    work = tmp_path / "project"
    (work / "workflows").mkdir(parents=True)
    (work / "workflows" / "good.json").write_text(json.dumps(GOOD, indent=2) + "\n")
    (work / "workflows" / "bad.json").write_text(BAD_TEXT)
    git(work, "init", "-q")
    git(work, "add", ".")
    git(
        work,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.invalid",
        "commit",
        "-q",
        "-m",
        "workflows",
    )
    return work


def try_repo(
    repo: Path, *files: str, hook: str = "workrail-validate"
) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(repo.parent / "pre-commit-home"),
        PIP_CACHE_DIR=str(CACHE / "pip"),
        NO_COLOR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.pop("VIRTUAL_ENV", None)
    command = [
        str(PRE_COMMIT),
        "try-repo",
        str(ROOT),
        hook,
        "--verbose",
        "--color",
        "never",
    ]
    command += ["--files", *files] if files else ["--all-files"]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_hook_passes_a_good_workflow_and_fails_a_bad_one(repo: Path) -> None:
    # Both runs install the project into their own throw-away environment; run them side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
        both = pool.submit(try_repo, repo)
        good_only = pool.submit(try_repo, repo, "workflows/good.json")
        result, good = both.result(), good_only.result()

    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert re.search(r"^workflows/bad\.json:5:29: WR1\d\d ", output, re.M), output
    assert "workflows/good.json:" not in output, output
    assert "Found 1 error in 1 file (2 files checked)" in output, output

    output = good.stdout + good.stderr
    assert good.returncode == 0, output
    assert "1 file passed" in output, output


@pytest.mark.slow
def test_hooks_honour_the_project_configuration_and_format(repo: Path) -> None:
    # Through `extend`, a per-file ignore whose `*` (as gitignore's) takes the files of
    # workflows/ itself.
    (repo / "pyproject.toml").write_text('[tool.workrail]\nextend = "shared.toml"\n')
    (repo / "shared.toml").write_text('[per-file-ignores]\n"workflows/*" = ["WR101"]\n')
    # The formatter rewrites files, and pre-commit fails any hook during which a file changed:
    # side by side on one checkout, the validate run would be blamed for the formatter's edit.
    copy = shutil.copytree(repo, repo.parent / "formatted")
    with ThreadPoolExecutor(max_workers=2) as pool:
        validated = pool.submit(try_repo, repo)
        formatted = pool.submit(try_repo, copy, hook="workrail-format")
        result, format_result = validated.result(), formatted.result()

    output = result.stdout + result.stderr
    assert result.returncode == 0, output  # bad.json's only problem is a WR101, ignored here
    assert "All 2 files passed" in output, output

    output = format_result.stdout + format_result.stderr
    assert format_result.returncode == 1, output  # pre-commit fails a hook that changed files
    assert "1 file reformatted, 1 file left unchanged" in output, output
    assert (copy / "workflows" / "bad.json").read_text() == BAD_TEXT.replace(
        '{"id": "only", "title": 42, "prompt": "Do the thing."}',
        '{\n      "id": "only",\n      "title": 42,\n      "prompt": "Do the thing."\n    }',
    )


def readme_config() -> str:
    """The `.pre-commit-config.yaml` the README shows, as written there."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```yaml\n(# \.pre-commit-config\.yaml\n.*?)```", readme, re.S)
    assert found, "the README shows no .pre-commit-config.yaml"
    return found.group(1)


def test_the_readmes_config_selects_what_the_manifest_does() -> None:
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in manifest if h["id"] == "workrail-validate"]
    (repo,) = yaml.safe_load(readme_config())["repos"]
    (local,) = repo["hooks"]
    assert repo["repo"] == "local" and "rev" not in repo  # no tag to name: the repo has none
    assert {k: local[k] for k in ("id", "entry", "files", "exclude")} == {
        k: hook[k] for k in ("id", "entry", "files", "exclude")
    }


@pytest.mark.slow
def test_the_readmes_config_works_as_written(repo: Path) -> None:
    (repo / ".pre-commit-config.yaml").write_text(readme_config(), encoding="utf-8")
    git(repo, "add", ".pre-commit-config.yaml")
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(repo.parent / "pre-commit-home"),
        NO_COLOR="1",
        # `workrail` on PATH, as after `pipx install .`: this environment's.
        PATH=f"{PRE_COMMIT.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )

    def pre_commit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PRE_COMMIT), "run", "--color", "never", *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    both = pre_commit("--all-files")
    output = both.stdout + both.stderr
    assert both.returncode == 1, output
    assert re.search(r"^workflows/bad\.json:5:29: WR1\d\d ", output, re.M), output
    good = pre_commit("--files", "workflows/good.json")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "workrail validate" in good.stdout and "Passed" in good.stdout, good.stdout
