"""The one rule for which files are workflows (CLI walk; meant for the language server too)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from workrail_engine.schema import SCHEMA_ID
from workrail_engine.text.workflow_files import (
    is_workflow_file,
    is_workflow_path,
    is_workflows_directory,
    names_workrail_schema,
)

PATH_CASES = [
    pytest.param("workflows/a.json", True, id="workflows-dir"),
    pytest.param("workflows/sub/a.yml", True, id="nested-in-workflows"),
    pytest.param(".workrail/workflows/a.yaml", True, id="dot-workrail"),
    pytest.param("deep/x/workflows/a.json", True, id="workflows-anywhere"),
    pytest.param("release.workflow.json", True, id="workflow-suffix"),
    pytest.param("a/b/release.workflow.YAML", False, id="case-matters-as-in-the-hook"),
    pytest.param("package.json", False, id="package-json"),
    pytest.param(".pre-commit-hooks.yaml", False, id="hooks"),
    pytest.param("workflows/readme.md", False, id="not-json-or-yaml"),
    pytest.param(".github/workflows/ci.yml", False, id="github-actions"),
    pytest.param("sub/.github/workflows/ci.yaml", False, id="nested-github-actions"),
    pytest.param("myworkflows/a.json", False, id="only-a-whole-folder-name"),
    pytest.param("workflow.json", False, id="bare-workflow-json"),
]


@pytest.mark.parametrize(("path", "expected"), PATH_CASES)
def test_is_workflow_path(path: str, expected: bool) -> None:
    assert is_workflow_path(path) is expected


@pytest.mark.parametrize(("path", "expected"), PATH_CASES)
def test_the_pre_commit_hook_selects_the_same_paths(path: str, expected: bool) -> None:
    # One rule: each hook's files/exclude patterns (workrail-validate, -format and -replay;
    # tests/test_pre_commit.py checks the hooks themselves).
    hooks = yaml.safe_load((Path(__file__).parents[3] / ".pre-commit-hooks.yaml").read_text())
    assert [hook["id"] for hook in hooks] == [
        "workrail-validate",
        "workrail-format",
        "workrail-replay",
    ]
    for hook in hooks:
        selected = bool(re.search(hook["files"], path)) and not re.search(hook["exclude"], path)
        assert selected is expected, hook["id"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(f'{{"$schema": "{SCHEMA_ID}", "id": "x"}}', True, id="json"),
        pytest.param(f"$schema: {SCHEMA_ID}\nid: x\n", True, id="yaml-plain"),
        pytest.param(f"'$schema': '{SCHEMA_ID}'\n", True, id="yaml-quoted"),
        pytest.param('{"$schema": "../schema/workflow.schema.json"}', True, id="local-copy"),
        pytest.param(
            f'{{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "{SCHEMA_ID}"}}',
            False,
            id="the-schema-itself",
        ),
        pytest.param('{"name": "pkg", "version": "1.0.0"}', False, id="package-json"),
        pytest.param(" " * 5000 + f'{{"$schema": "{SCHEMA_ID}"}}', False, id="beyond-the-head"),
    ],
)
def test_names_workrail_schema(text: str, expected: bool) -> None:
    assert names_workrail_schema(text) is expected


def test_is_workflow_file_peeks_at_the_schema(tmp_path: Path) -> None:
    mine = tmp_path / "mine.json"
    mine.write_text(f'{{"$schema": "{SCHEMA_ID}"}}')
    other = tmp_path / "tsconfig.json"
    other.write_text('{"compilerOptions": {}}')
    assert is_workflow_file(mine) and not is_workflow_file(other)
    assert not is_workflow_file(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("workflows", True),
        ("a/.workrail/workflows", True),
        (".github/workflows", False),
        ("flows", False),
    ],
)
def test_is_workflows_directory(path: str, expected: bool) -> None:
    assert is_workflows_directory(path) is expected
