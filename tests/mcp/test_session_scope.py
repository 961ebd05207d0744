"""Whose sessions a client sees, through the real server: two clients in two workspaces of one
HTTP server (the SDK's client), and one stdio client in two workspaces. A client finds only the
sessions started in its workspace, and a resume token turns into a continue token only there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.mcp.conftest import stdio_parameters, write_workflow
from tests.mcp.test_http import http_server
from tests.mcp.test_sessions_mcp import FLOW

pytestmark = pytest.mark.slow

NOTES = "PLAN: rotate the zebra signing keys"  # a phrase only Alice's session holds


class Caller:
    """One client's session tools, in its workspace: ``call`` gives (isError, the JSON)."""

    def __init__(self, client: Client, workspace: Path) -> None:
        self.client = client
        self.workspace = str(workspace)

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        result = await self.client.call_tool(tool, arguments)
        return bool(result.is_error), json.loads(result.content[0].text)

    async def ok(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        failed, body = await self.call(tool, arguments)
        assert not failed, body
        return body

    async def found(self, **search: Any) -> list[str]:
        """The run ids resume_session finds for this caller's workspace."""
        body = await self.ok("resume_session", {"workspacePath": self.workspace, **search})
        return [c["runId"] for c in body["candidates"]]


async def _alice_checkpoints(alice: Caller) -> tuple[str, str]:
    """Alice's session, one step answered: its run id and resume token."""
    started = await alice.ok(
        "start_workflow",
        {"workflowId": "session-flow", "workspacePath": alice.workspace, "goal": "keys"},
    )
    moved = await alice.ok(
        "continue_workflow",
        {"continueToken": started["continueToken"], "output": {"notesMarkdown": NOTES}},
    )
    checkpoint = await alice.ok(
        "checkpoint_workflow", {"checkpointToken": moved["checkpointToken"]}
    )
    return started["runId"], checkpoint["resumeToken"]


async def _cannot_rehydrate(bob: Caller, resume_token: str) -> None:
    for where in ({"workspacePath": bob.workspace}, {}):
        failed, body = await bob.call(
            "continue_workflow",
            {"continueToken": resume_token, "intent": "rehydrate", **where},
        )
        assert failed and body["error"]["data"]["reason"] == "TOKEN_SCOPE_MISMATCH", body
        assert "ct_" not in json.dumps(body)


async def _alice_resumes_and_finishes(alice: Caller, run_id: str) -> None:
    body = await alice.ok("resume_session", {"workspacePath": alice.workspace})
    mine = [c for c in body["candidates"] if c["runId"] == run_id]
    assert mine, body
    call = mine[0]["nextCall"]
    reread = await alice.ok(call["tool"], call["params"])
    assert reread["pending"]["stepId"] == "ship" and "zebra" in reread["pending"]["prompt"]
    done = await alice.ok(
        "continue_workflow",
        {"continueToken": reread["continueToken"], "output": {"notesMarkdown": "shipped"}},
    )
    assert done["isComplete"]


@pytest.fixture
def workspaces(tmp_path: Path) -> tuple[Path, Path, Path]:
    project = tmp_path / "project"
    write_workflow(project / "workflows", FLOW)
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    alice.mkdir()
    bob.mkdir()
    return project, alice, bob


async def test_an_http_client_finds_and_resumes_only_its_workspaces_sessions(tmp_path, workspaces):
    project, alice_dir, bob_dir = workspaces
    with http_server(project, tmp_path) as (url, _):
        async with Client(url) as alice_client, Client(url) as bob_client:
            alice, bob = Caller(alice_client, alice_dir), Caller(bob_client, bob_dir)
            run_id, resume_token = await _alice_checkpoints(alice)
            assert run_id not in await bob.found()  # no query: the most recent sessions
            assert run_id not in await bob.found(query="zebra signing")
            assert run_id not in await bob.found(runId=run_id)
            listed = await bob.ok("list_workflows", {"include_running": True})
            assert run_id not in [run["workflow_id"] for run in listed["running"]]
            failed, body = await bob.call(
                "resume_session", {"workspacePath": bob.workspace, "sameWorkspaceOnly": False}
            )
            assert failed and "shared by several clients" in body["error"]["message"], body
            await _cannot_rehydrate(bob, resume_token)
            await _alice_resumes_and_finishes(alice, run_id)


async def test_a_stdio_client_finds_another_workspaces_sessions_only_when_asked(
    tmp_path, workspaces
):
    project, alice_dir, bob_dir = workspaces
    async with Client(stdio_parameters(project, tmp_path)) as client:
        alice, bob = Caller(client, alice_dir), Caller(client, bob_dir)
        run_id, resume_token = await _alice_checkpoints(alice)
        assert run_id not in await bob.found()
        assert run_id not in await bob.found(query="zebra signing")
        # the one client of the server owns every session of its store: it may widen the search
        assert run_id in await bob.found(query="zebra signing", sameWorkspaceOnly=False)
        await _cannot_rehydrate(bob, resume_token)
        await _alice_resumes_and_finishes(alice, run_id)
