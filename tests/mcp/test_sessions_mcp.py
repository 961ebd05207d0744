"""Sessions through the real server over stdio: start, a blocked and an applied answer, a replay,
a checkpoint; the server killed; a new server process finds the session by a phrase of its notes
and finishes it."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.mcp.conftest import write_workflow
from tests.mcp.test_run_recovery import StdioSession
from workrail_engine.sessions.git_context import MAX_GIT_FILE_BYTES

pytestmark = pytest.mark.slow

FLOW = {
    "id": "session-flow",
    "name": "Session flow",
    "description": "Two agent steps",
    "version": "1.0.0",
    "steps": [
        {
            "id": "plan",
            "title": "Plan",
            "prompt": "Plan it",
            "validationCriteria": [
                {"type": "contains", "value": "PLAN", "message": "Start with PLAN"}
            ],
        },
        {"id": "ship", "title": "Ship", "prompt": "Ship it"},
    ],
}


def call(server: StdioSession, tool: str, arguments: dict) -> dict:
    reply = server.request("tools/call", {"name": tool, "arguments": arguments})
    result = reply["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_a_session_outlives_its_server_and_is_found_by_its_notes(tmp_path):
    project = tmp_path / "project"
    write_workflow(project / "workflows", FLOW)
    server = StdioSession(project, tmp_path)
    try:
        started = call(
            server,
            "start_workflow",
            {"workflowId": "session-flow", "workspacePath": str(project), "goal": "ship caching"},
        )
        assert started["kind"] == "ok" and started["pending"]["stepId"] == "plan"
        assert started["nextCall"]["params"]["continueToken"] == started["continueToken"]
        token = started["continueToken"]
        blocked = call(
            server,
            "continue_workflow",
            {"continueToken": token, "output": {"notesMarkdown": "no idea"}},
        )
        assert blocked["kind"] == "blocked"
        assert blocked["blockers"]["blockers"][0]["message"] == "Start with PLAN"
        answer = {"continueToken": token, "output": {"notesMarkdown": "PLAN: use a lru cache"}}
        moved = call(server, "continue_workflow", answer)
        assert moved["pending"]["stepId"] == "ship"
        assert call(server, "continue_workflow", answer)["outcome"] == "replayed"
        refused = server.request(
            "tools/call",
            {
                "name": "continue_workflow",
                "arguments": {"continueToken": token, "output": {"notesMarkdown": "PLAN: other"}},
            },
        )["result"]
        assert refused["isError"]
        assert "answer not applied" in refused["content"][0]["text"]
        checkpoint = call(
            server, "checkpoint_workflow", {"checkpointToken": moved["checkpointToken"]}
        )
        assert checkpoint["resumeToken"].startswith("st_")
        status = call(server, "get_workflow_run", {"workflow_id": started["runId"]})
        assert status["status"] == "waiting" and status["step_results"][0]["notes"].startswith(
            "PLAN"
        )
    finally:
        server.kill()
    again = StdioSession(project, tmp_path)
    try:
        found = call(again, "resume_session", {"workspacePath": str(project), "query": "lru cache"})
        first = found["candidates"][0]
        assert first["runId"] == started["runId"] and first["pendingStepId"] == "ship"
        assert "matched_notes" in first["whyMatched"]
        resumed = call(again, "continue_workflow", first["nextCall"]["params"])
        assert "lru cache" in resumed["pending"]["prompt"]  # the recovery section
        done = call(
            again,
            "continue_workflow",
            {"continueToken": resumed["continueToken"], "output": {"notesMarkdown": "shipped"}},
        )
        assert done["isComplete"] and done["nextIntent"] == "complete"
        listed = call(again, "list_workflows", {"include_running": True})
        assert started["runId"] not in json.dumps(listed.get("running", []))
    finally:
        again.kill()


def hostile_heads(root: Path) -> dict[str, Path]:
    """Workspaces whose ``.git/HEAD`` is not a small regular file, and one whose HEAD is."""
    heads = {}
    for name in ("plain", "huge", "fifo", "dev-zero"):
        workspace = root / name
        (workspace / ".git").mkdir(parents=True)
        heads[name] = workspace
    (heads["plain"] / ".git" / "HEAD").write_text("ref: refs/heads/feature\n")
    # a branch first, then more than the bound of blank lines: read whole, it named the branch
    with open(heads["huge"] / ".git" / "HEAD", "w") as huge:
        huge.write("ref: refs/heads/feature" + "\n" * (1 << 20))
    os.mkfifo(heads["fifo"] / ".git" / "HEAD")  # no writer: an open for reading waits for one
    (heads["dev-zero"] / ".git" / "HEAD").symlink_to("/dev/zero")  # never ends
    return heads


def test_a_workspace_git_head_that_is_not_a_small_file_is_unknown(tmp_path):
    """`.git/HEAD` a FIFO hung the call for good, `/dev/zero` read to the memory cap, a huge
    file was read whole: each now answers at once with the branch unknown."""
    project = tmp_path / "project"
    write_workflow(project / "workflows", FLOW)
    heads = hostile_heads(tmp_path / "workspaces")
    server = StdioSession(project, tmp_path)
    try:
        with ThreadPoolExecutor(1) as waiting:
            for name, workspace in heads.items():
                started_at = time.monotonic()
                answer = waiting.submit(
                    call,
                    server,
                    "start_workflow",
                    {"workflowId": "session-flow", "workspacePath": str(workspace), "goal": name},
                )
                try:
                    started = answer.result(timeout=20)
                except TimeoutError:
                    server.kill()  # the reader thread sees the end of stdout
                    pytest.fail(f"{name}: start_workflow did not answer in 20 s")
                assert time.monotonic() - started_at < 10, name
                found = call(
                    server,
                    "resume_session",
                    {"workspacePath": str(workspace), "runId": started["runId"]},
                )
                branch = found["candidates"][0]["gitBranch"]
                assert branch == ("feature" if name == "plain" else None), (name, branch)
    finally:
        if server.proc.poll() is None:
            server.kill()
    assert (heads["huge"] / ".git" / "HEAD").stat().st_size > MAX_GIT_FILE_BYTES


@pytest.fixture(scope="module")
def http_sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One HTTP server (token "tok") for both eras' tests: each starts a session of its own, and
    a start that opens the run store is ≈ 2 s of CPU. Its project and URL."""
    from tests.mcp.test_http import http_server

    home = tmp_path_factory.mktemp("http-sessions")
    project = home / "project"
    write_workflow(project / "workflows", FLOW)
    with http_server(project, home, token="tok") as (url, _):
        yield project, url


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_session_over_http_in_both_protocol_eras(http_sessions, mode):
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    project, url = http_sessions
    async with httpx2.AsyncClient(headers={"Authorization": "Bearer tok"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as c:
            names = {tool.name for tool in (await c.list_tools()).tools}
            assert {"start_workflow", "checkpoint_workflow", "resume_session"} <= names
            started = await c.call_tool(
                "start_workflow",
                {"workflowId": "session-flow", "workspacePath": str(project), "goal": "g"},
            )
            token = started.structured_content["continueToken"]

            async def answer(text: str):
                return await c.call_tool(
                    "continue_workflow",
                    {"continueToken": token, "output": {"notesMarkdown": text}},
                )

            results: list = []

            async def send(text: str) -> None:
                results.append(await answer(text))

            async with anyio.create_task_group() as group:  # two different answers at once
                group.start_soon(send, "PLAN: one")
                group.start_soon(send, "PLAN: two")
            assert sorted(r.is_error for r in results) == [False, True]
            refused = next(r for r in results if r.is_error)
            assert "answer not applied" in refused.content[0].text
            applied = next(r for r in results if not r.is_error).structured_content
            assert applied["pending"]["stepId"] == "ship"
            status = await c.call_tool("get_workflow_run", {"workflow_id": applied["runId"]})
            assert len(status.structured_content["step_results"]) == 1
