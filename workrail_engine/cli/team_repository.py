"""`workrail init --repo [NAME]`: what a team's workflow repository needs to start.

Projects use such a repository through ``workflow-repos`` (docs/sources.md). The scaffold:

- ``workflows/NAME.json``: a valid starter workflow (`scaffold.starter_workflow`);
- ``README.md``: how a project declares the repository, pins it (a tag) and locks it, and how to
  check a change locally;
- ``.github/workflows/workrail.yml``: a CI job that runs ``workrail validate`` on every push and
  pull request (GitHub annotations, warnings failing too). WorkRail Kit has no ``replay``
  command, so that is the one check;
- ``.pre-commit-config.yaml``: the ``workrail-validate`` and ``workrail-format`` hooks of this
  project's ``.pre-commit-hooks.yaml``, as ``local`` hooks that run the ``workrail`` on PATH (the
  project has no release tag for a ``rev:`` yet).

Each file is written only when absent (atomically, never over another's file); an existing one is
kept and said so, so that the command can be run again in a repository that has some of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workrail_engine.cli.console import Console
from workrail_engine.cli.scaffold import create_exclusively, starter_workflow

__all__ = ["DEFAULT_REPO_WORKFLOW", "PRE_COMMIT_HOOKS", "run_init_repo", "scaffold_files"]

DEFAULT_REPO_WORKFLOW = "team-workflow"

# The hooks of .pre-commit-hooks.yaml (tests/cli/test_init_repo_cli.py checks they match), as
# `local` hooks: `language: system` runs the `workrail` installed with WorkRail Kit.
_WORKFLOW_FILES = r"(^|/)(\.workrail/)?workflows/.*\.(json|ya?ml)$|\.workflow\.(json|ya?ml)$"
_GITHUB_ACTIONS = r"(^|/)\.github/workflows/"
PRE_COMMIT_HOOKS: tuple[dict[str, Any], ...] = (
    {
        "id": "workrail-validate",
        "name": "workrail validate",
        "entry": "workrail validate",
        "require_serial": True,
    },
    {"id": "workrail-format", "name": "workrail format", "entry": "workrail format"},
)


def _pre_commit_config() -> str:
    lines = [
        "# pre-commit (https://pre-commit.com): `pre-commit install` once, then every commit",
        "# checks and lays out the workflow files. Needs `workrail` on PATH (WorkRail Kit).",
        "repos:",
        "  - repo: local",
        "    hooks:",
    ]
    for hook in PRE_COMMIT_HOOKS:
        lines += [
            f"      - id: {hook['id']}",
            f"        name: {hook['name']}",
            f"        entry: {hook['entry']}",
            "        language: system",
            f"        files: '{_WORKFLOW_FILES}'",
            f"        exclude: '{_GITHUB_ACTIONS}'",
        ]
        if hook.get("require_serial"):
            lines.append("        require_serial: true")
    return "\n".join(lines) + "\n"


_CI = """\
# Checks the workflows on every push and pull request: schema and semantic checks, warnings
# included, reported as annotations on the changed lines.
name: workrail
on: [push, pull_request]
permissions:
  contents: read
jobs:
  validate:
    runs-on: ubuntu-latest
    env:
      # Where your team installs WorkRail Kit from: a package index's `workrail-kit==VERSION`,
      # or `git+https://…/workrail-kit.git@COMMIT`.
      WORKRAIL_KIT: workrail-kit
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: python -m pip install "$WORKRAIL_KIT"
      - run: workrail validate --strict --format github
      - run: workrail format --check
"""

_README = """\
# Team workflows

WorkRail workflows shared by the team's projects: each project names this repository in its
configuration, and its CLI, MCP server and editor serve these workflows beside its own.

## Use it in a project

```toml
# .workrail/config.toml of the project (or [tool.workrail] in pyproject.toml), committed
workflow-repos = [{{url = "https://git.example.com/team/workflows.git", rev = "v1.0.0", path = "workflows"}}]
```
```console
$ workrail sources sync     # fetch (a token from WORKRAIL_GIT_TOKEN, GITHUB_TOKEN…)
$ workrail sources lock     # .workrail/sources.lock: everyone gets the same commit
$ workrail list             # these workflows, SOURCE repo:workflows
```

`rev` is a tag (pinned: tag each release here) or a branch (followed: the servers fetch it in
the background). A project overrides one of these workflows with its own file of the same id.

## Change a workflow

Workflows live in `workflows/` (one JSON or YAML file each; routines in `workflows/routines/`).
Start one with `workrail init NAME --dir workflows`; check with `workrail validate`; lay out with
`workrail format`. `pre-commit install` runs both on every commit (`.pre-commit-config.yaml`), and
CI (`.github/workflows/workrail.yml`) runs them on every push and pull request.

The first workflow here is `workflows/{name}.json`.
"""


def scaffold_files(name: str) -> dict[str, str]:
    """Path inside the repository → content, of every file the scaffold writes."""
    workflow = json.dumps(starter_workflow(name), indent=2, ensure_ascii=False) + "\n"
    return {
        "README.md": _README.format(name=name),
        f"workflows/{name}.json": workflow,
        ".github/workflows/workrail.yml": _CI,
        ".pre-commit-config.yaml": _pre_commit_config(),
    }


def run_init_repo(name: str, directory: Path, console: Console) -> int:
    for relative, content in scaffold_files(name).items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            create_exclusively(target, content)
        except FileExistsError:
            console.err(f"kept {target} (it exists)")
            continue
        console.out(f"Created {target}")
    console.out(f"Check it with: workrail --project {directory} validate")
    return 0
