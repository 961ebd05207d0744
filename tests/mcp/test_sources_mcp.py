"""A workflow repository's workflows through the real stdio MCP server: listed with their source,
served step by step, in both tool editions; read from the cache at start, never fetched."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.git_remotes import GitRemote, project_using, workflow
from tests.mcp.conftest import server_env


def stdio_client(project: Path, tmp_path: Path, edition: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workrail_mcp", "--project", str(project), "--tools", edition],
        env=server_env(tmp_path),
        cwd=str(tmp_path),
    )
    return Client(params, mode="legacy")


@pytest.fixture
def synced_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path / "home"))  # the server's, see server_env
    remote = GitRemote(tmp_path / "remotes")
    remote.write("flows/team.json", workflow("team-review", "Review the change."))
    remote.commit("one")
    project = project_using(remote, tmp_path / "project")
    remote.bare.rename(tmp_path / "gone.git")  # the server must not need the network
    return project


async def test_the_default_edition_lists_and_serves_a_repository_workflow(
    synced_project: Path, tmp_path: Path
) -> None:
    async with stdio_client(synced_project, tmp_path, "default") as client:
        listed = await client.call_tool("workflow_list", {})
        rows = {w["id"]: w for w in listed.structured_content["workflows"]}
        assert rows["team-review"]["source"] == "repo:team"
        step = await client.call_tool(
            "workflow_next", {"workflowId": "team-review", "completedSteps": []}
        )
        assert "Review the change." in step.structured_content["step"]["prompt"]


async def test_the_upstream_edition_names_the_repository(
    synced_project: Path, tmp_path: Path
) -> None:
    async with stdio_client(synced_project, tmp_path, "upstream") as client:
        listed = await client.call_tool(
            "list_workflows", {"workspacePath": str(synced_project), "includeSources": True}
        )
        rows = {w["workflowId"]: w for w in listed.structured_content["workflows"]}
        assert rows["team-review"]["visibility"]["source"] == {
            "kind": "repo",
            "displayName": "Repository team",
        }
