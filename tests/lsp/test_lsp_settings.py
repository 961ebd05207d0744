"""Settings parsing and workflow detection, as plain functions."""

from __future__ import annotations

import pytest

from workrail_lsp.configuration import DEFAULT_GLOBS, Settings, glob_pattern


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        pytest.param("**/*.workflow.json", "/p/a.workflow.json", True, id="suffix"),
        pytest.param("**/*.workflow.json", "/p/a.json", False, id="not-suffix"),
        pytest.param("**/workflows/**/*.json", "/p/workflows/a.json", True, id="workflows-folder"),
        pytest.param(
            "**/workflows/**/*.json",
            "/p/.workrail/workflows/sub/a.json",
            True,
            id="nested-workrail",
        ),
        pytest.param(
            "**/workflows/**/*.json", "/p/myworkflows/a.json", False, id="folder-name-boundary"
        ),
        pytest.param("*.wr.json", "/p/x/a.wr.json", True, id="relative-glob"),
        pytest.param("a?.json", "/p/ab.json", True, id="question-mark"),
    ],
)
def test_globs(glob, path, matches):
    assert bool(glob_pattern(glob).search(path)) is matches


def test_settings_from_client_accept_a_section_and_reject_bad_values(caplog):
    settings = Settings.from_client(
        {"workrail": {"workflowGlobs": ["**/*.wr.json"], "extraWorkflowDirs": "oops"}}
    )
    assert settings.workflow_globs == ("**/*.wr.json",)
    assert settings.extra_workflow_dirs == ()
    assert "extraWorkflowDirs" in caplog.text
    assert Settings.from_client(None).workflow_globs == DEFAULT_GLOBS


def test_is_workflow_by_path_folder_and_schema(tmp_path):
    extra = tmp_path / "team"
    extra.mkdir()
    settings = Settings(extra_workflow_dirs=(str(extra),))
    assert settings.is_workflow("/p/a.workflow.json", "")
    assert settings.is_workflow(str(extra / "x.json"), "")
    assert not settings.is_workflow("/p/package.json", '{"name": "x"}')
    assert settings.is_workflow(
        "/p/any.json", '{"$schema": "https://workrail.dev/schema/workflow.schema.json"}'
    )
    assert settings.is_workflow(None, '{\n  "$schema": "../schema/workflow.schema.json"}')


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        pytest.param("/p/workflows/a.json", "{}", True, id="workflows-dir"),
        pytest.param("/p/.workrail/workflows/a.yaml", "", True, id="workrail-dir"),
        pytest.param("/p/a.workflow.yml", "", True, id="suffix"),
        pytest.param("/p/.github/workflows/ci.yml", "on: push", False, id="github-actions"),
        pytest.param("/p/package.json", "{}", False, id="other-json"),
        pytest.param(
            "/p/x.json",
            '{"$schema": "https://workrail.dev/schema/workflow.schema.json"}',
            True,
            id="json-schema-key",
        ),
        pytest.param(
            "/p/x.yaml",
            "$schema: https://workrail.dev/schema/workflow.schema.json\n",
            True,
            id="yaml-schema-key",
        ),
    ],
)
def test_default_rule_is_the_one_validate_and_pre_commit_use(path, text, expected):
    from workrail_engine.text.workflow_files import is_workflow_path, names_workrail_schema

    assert Settings().is_workflow(path, text) is expected
    assert (is_workflow_path(path) or names_workrail_schema(text)) is expected
