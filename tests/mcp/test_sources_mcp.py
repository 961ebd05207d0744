"""A workflow repository's workflows through the real stdio MCP server: listed with their source,
served step by step, in both tool editions; read from the cache at start (never waiting for a
fetch), and a followed branch refreshed in the background, without a restart."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.git_remotes import GitRemote, project_using, workflow
from tests.mcp.conftest import server_env
from workrail_engine.sources.cache import CachedRepository
from workrail_engine.sources.refresh import SYNC_INTERVAL_VARIABLE
from workrail_engine.sources.served import declared_sources


def stdio_client(project: Path, tmp_path: Path, edition: str, **env: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workrail_mcp", "--project", str(project), "--tools", edition],
        env=server_env(tmp_path, **env),
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


async def test_the_upstream_source_catalog_counts_what_each_source_serves_and_shadows(
    synced_project: Path, tmp_path: Path
) -> None:
    # the project's own file wins over the team's workflow of the same id
    (synced_project / "workflows").mkdir(exist_ok=True)
    (synced_project / "workflows" / "team-review.json").write_text(
        json.dumps(workflow("team-review", "Our own review."))
    )
    async with stdio_client(synced_project, tmp_path, "upstream") as client:
        plain = await client.call_tool("list_workflows", {"workspacePath": str(synced_project)})
        assert "sources" not in plain.structured_content
        listed = await client.call_tool(
            "list_workflows", {"workspacePath": str(synced_project), "includeSources": True}
        )
    answer = listed.structured_content
    assert "tagSummary" not in answer
    by_kind = {entry["source"]["kind"]: entry for entry in answer["sources"]}
    team = by_kind["git"]
    assert team["source"]["displayName"] == "Repository team"
    assert (
        team["effectiveWorkflowCount"],
        team["shadowedWorkflowCount"],
        team["totalWorkflowCount"],
    ) == (0, 1, 1)
    # ./workflows and ./.workrail/workflows are two project sources
    projects = [e for e in answer["sources"] if e["source"]["kind"] == "project"]
    assert sum(e["effectiveWorkflowCount"] for e in projects) == 1
    bundled = by_kind["bundled"]
    assert bundled["sourceKey"] == "built_in" and bundled["category"] == "built_in"
    assert bundled["effectiveWorkflowCount"] == sum(
        w["visibility"]["source"]["kind"] == "bundled" for w in answer["workflows"]
    )


async def _listed_ids(client: Client) -> set[str]:
    listed = await client.call_tool("workflow_list", {})
    return {w["id"] for w in listed.structured_content["workflows"]}


async def test_a_push_to_the_followed_branch_is_served_without_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path / "home"))  # the server's, see server_env
    remote = GitRemote(tmp_path / "remotes")
    remote.write("flows/team.json", workflow("team-review"))
    remote.commit("one")
    project = project_using(remote, tmp_path / "project")
    interval = {SYNC_INTERVAL_VARIABLE: "1"}
    async with stdio_client(project, tmp_path, "default", **interval) as client:
        assert "team-review" in await _listed_ids(client)
        remote.write("flows/second.json", workflow("team-second"))
        moved = remote.commit("two")
        deadline = time.monotonic() + 30
        while "team-second" not in await _listed_ids(client):
            assert time.monotonic() < deadline, "the pushed workflow was never served"
            await anyio.sleep(0.2)
    (source,) = declared_sources(project).sources
    assert CachedRepository(source.url).synced("main")["commit"] == moved


async def test_the_first_tools_list_answers_while_the_sync_is_still_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `git` on PATH that takes 3 s: the first tools/list answers after it started, before
    it ended."""
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path / "home"))
    remote = GitRemote(tmp_path / "remotes")
    remote.write("flows/team.json", workflow("team-review"))
    remote.commit("one")
    project = project_using(remote, tmp_path / "project")
    calls = tmp_path / "git-calls"
    slow = tmp_path / "slow-git"
    slow.mkdir()
    (slow / "git").write_text(
        f'#!/bin/sh\necho started >> {calls}\nsleep 3\n{shutil.which("git")} "$@"\n'
        f"status=$?\necho ended >> {calls}\nexit $status\n"
    )
    (slow / "git").chmod(0o755)
    path = f"{slow}{os.pathsep}{os.environ['PATH']}"
    async with stdio_client(project, tmp_path, "default", PATH=path) as client:
        with anyio.fail_after(10):
            while not calls.exists():  # the background sync's first git call
                await anyio.sleep(0.02)
        began = time.monotonic()
        tools = await client.list_tools()
        took = time.monotonic() - began
        assert tools.tools and took < 2.0, took
        assert calls.read_text().split() == ["started"]  # the fetch is still under way
