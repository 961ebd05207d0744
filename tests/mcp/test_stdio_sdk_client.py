"""The SDK's own Client over a real stdio process, in both protocol eras."""

from __future__ import annotations

import json
import sys

import pytest
from mcp import Client, MCPError, StdioServerParameters

from tests.mcp.conftest import TEST_FLOW, server_env, write_workflow
from tests.mcp.tool_results import error_of

pytestmark = pytest.mark.slow


def stdio_client(project, tmp_path, mode: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workrail_mcp", "--project", str(project)],
        env=server_env(tmp_path),
        cwd=str(tmp_path),
    )
    return Client(params, mode=mode)


@pytest.mark.parametrize(
    "mode, version",
    [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28"), ("auto", "2026-07-28")],
)
async def test_a_full_session(project, tmp_path, mode, version):
    async with stdio_client(project, tmp_path, mode) as client:
        assert client.protocol_version == version
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"workflow_list", "workflow_next", "create_workflow"} <= names
        listed = await client.call_tool("workflow_list", {})
        assert "test-flow" in {w["id"] for w in listed.structured_content["workflows"]}
        step = await client.call_tool(
            "workflow_next", {"workflowId": "test-flow", "completedSteps": []}
        )
        assert step.structured_content["step"]["id"] == "understand"
        missing = await client.call_tool("workflow_get", {"id": "missing-flow"})
        assert error_of(missing)["code"] == -32001
        with pytest.raises(MCPError) as raised:
            await client.call_tool("no_such_tool", {})
        assert raised.value.error.code == -32602
        resource = await client.read_resource("workrail://workflows/test-flow")
        assert json.loads(resource.contents[0].text)["id"] == "test-flow"
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        assert "test-flow" in prompts
        started = await client.get_prompt("test-flow", {"task": "add a flag"})
        assert "workflow_next" in started.messages[0].content.text


async def test_new_workflow_files_are_announced(project, tmp_path):
    """A workflow file appearing while connected → prompts/resources list_changed notifications."""
    import anyio

    seen: list[str] = []

    async def on_message(message) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            seen.append(method)

    client = stdio_client(project, tmp_path, "legacy")
    client.message_handler = on_message
    async with client:
        assert "late-flow" not in {p.name for p in (await client.list_prompts()).prompts}
        told = seen.count("notifications/prompts/list_changed")
        write_workflow(project / "workflows", {**TEST_FLOW, "id": "late-flow", "name": "Late"})
        with anyio.fail_after(15):
            # Re-list only when told to (a notice may also come for the catalog's first scan).
            while True:
                while seen.count("notifications/prompts/list_changed") == told:
                    await anyio.sleep(0.05)
                told = seen.count("notifications/prompts/list_changed")
                if "late-flow" in {p.name for p in (await client.list_prompts()).prompts}:
                    break
        assert "notifications/resources/list_changed" in seen


async def test_the_clients_roots_become_the_project(project, tmp_path):
    """Without --project, a client's roots choose the project whose workflows are served."""
    from mcp_types import ListRootsResult, Root

    async def roots(_context) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=project.as_uri(), name="project")])

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workrail_mcp"],
        env=server_env(tmp_path),
        cwd=str(tmp_path),
    )
    async with Client(params, mode="legacy", list_roots_callback=roots) as client:
        import anyio

        with anyio.fail_after(15):
            while True:
                listed = await client.call_tool("workflow_list", {})
                if "test-flow" in {w["id"] for w in listed.structured_content["workflows"]}:
                    break
                await anyio.sleep(0.1)
