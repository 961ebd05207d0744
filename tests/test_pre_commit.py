"""The `workrail-validate` hook through the real pre-commit, as a project's config names this repo.

The repository is used as try-repo would use it: HEAD, or, with uncommitted changes to tracked
files, a shadow commit of them (pre-commit's own `_repo_ref`). The hooks then run from a config
naming that repo and rev, with one pre-commit home for the module: pre-commit installs the project
into its environment once (under its own lock), and every run after reuses it — try-repo would
install it afresh each time (its store is a temporary one). That install takes the dependencies
from wheels built once per machine (tests/dependency_wheels.py; the package index must be
reachable for the first build) and writes no bytecode: pip still builds the project from this
source tree through its build backend, as pre-commit does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from dependency_wheels import install_from_wheels
from system_packages import require

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")

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


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """This repository and the rev to use: what `pre-commit try-repo` would run."""
    # imported here, not at the top: every pytest-xdist worker collects this module, and
    # pre-commit's commands cost each ≈ 0.3 s of CPU to import
    from pre_commit.commands.try_repo import _repo_ref

    require("git")
    return _repo_ref(str(tmp_path_factory.mktemp("shadow")), str(ROOT), None)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store for the module's runs, so the project is installed into pre-commit's env once."""
    return tmp_path_factory.mktemp("pre-commit-home")


RunHook = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_hook(hook_repo: tuple[str, str], pre_commit_home: Path, tmp_path: Path) -> RunHook:
    """`pre-commit run HOOK` in a checkout, from a config naming this repo at `hook_repo`'s rev."""
    url, rev = hook_repo
    env = dict(
        os.environ, PRE_COMMIT_HOME=str(pre_commit_home), NO_COLOR="1", **install_from_wheels()
    )
    env.pop("VIRTUAL_ENV", None)

    def run(
        checkout: Path, *files: str, hook: str = "workrail-validate"
    ) -> subprocess.CompletedProcess[str]:
        # Outside the checkout, as try-repo writes it: the hooks must not see it as a file.
        config = tmp_path / f"{hook}.pre-commit-config.yaml"
        repos = [{"repo": url, "rev": rev, "hooks": [{"id": hook}]}]
        config.write_text(yaml.safe_dump({"repos": repos}), encoding="utf-8")
        command = [str(PRE_COMMIT), "run", "--config", str(config), hook, "--verbose"]
        command += ["--color", "never"]
        command += ["--files", *files] if files else ["--all-files"]
        return subprocess.run(
            command, cwd=checkout, env=env, capture_output=True, text=True, timeout=900
        )

    return run


@pytest.mark.slow
def test_hook_passes_a_good_workflow_and_fails_a_bad_one(repo: Path, run_hook: RunHook) -> None:
    result, good = run_hook(repo), run_hook(repo, "workflows/good.json")

    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert re.search(r"^workflows/bad\.json:5:29: WR1\d\d ", output, re.M), output
    assert "workflows/good.json:" not in output, output
    assert "Found 1 error in 1 file (2 files checked)" in output, output

    output = good.stdout + good.stderr
    assert good.returncode == 0, output
    assert "1 file passed" in output, output


@pytest.mark.slow
def test_the_hook_checks_every_file_in_one_process(repo: Path, run_hook: RunHook) -> None:
    """pre-commit splits a hook's files among processes, one per CPU, unless the hook asks for
    one: then a workflow id shared by the first and the last of ten files is found."""
    for name in "acdefghi":
        workflow = dict(GOOD, id="shared" if name in "ai" else f"flow-{name}")
        (repo / "workflows" / f"{name}.json").write_text(json.dumps(workflow, indent=2) + "\n")
    git(repo, "add", ".")
    result = run_hook(repo)
    output = result.stdout + result.stderr
    assert "(10 files checked)" in output, output
    assert re.search(r"^workflows/[ai]\.json:\d+:\d+: WR603 ", output, re.M), output


@pytest.mark.slow
def test_hooks_honour_the_project_configuration_and_format(repo: Path, run_hook: RunHook) -> None:
    # Through `extend`, a per-file ignore whose `*` (as gitignore's) takes the files of
    # workflows/ itself.
    (repo / "pyproject.toml").write_text('[tool.workrail]\nextend = "shared.toml"\n')
    (repo / "shared.toml").write_text('[per-file-ignores]\n"workflows/*" = ["WR101"]\n')
    # The formatter rewrites files: it runs on a copy, so the validate run sees the text as written.
    copy = shutil.copytree(repo, repo.parent / "formatted")
    result, format_result = run_hook(repo), run_hook(copy, hook="workrail-format")

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
    keys = ("id", "entry", "files", "exclude", "require_serial")
    assert {k: local.get(k) for k in keys} == {k: hook.get(k) for k in keys}


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


@pytest.mark.slow
def test_the_replay_hook_fails_a_change_that_parts_from_a_recorded_history(
    tmp_path: Path, run_hook: RunHook
) -> None:
    from tests.cli.test_replay_cli import edited, record, replay

    root = record(tmp_path / "recorded")
    work = root / "project"
    exported = replay(root, "--export", ".workrail/replays")
    assert exported.returncode == 0, exported.stderr
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "w")
    held = run_hook(work, "workflows/replay-flow.json", hook="workrail-replay")
    assert held.returncode == 0, held.stdout + held.stderr
    assert "2 hold" in held.stdout, held.stdout
    edited(root, lambda flow: flow["steps"][3].update(id="deliver"))
    parted = run_hook(work, "workflows/replay-flow.json", hook="workrail-replay")
    output = parted.stdout + parted.stderr
    assert parted.returncode == 1, output
    assert re.search(r"^workflows/replay-flow\.json:\d+:\d+: WR903 ", output, re.M), output
