"""`logging/setLevel` over the real stdio process: the server's log records reach the client."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import MCPError
from mcp_types import EmptyResult, Request

from tests.mcp.conftest import by_id, run_stdio
from tests.mcp.messages import INITIALIZE, INITIALIZED
from tests.mcp.test_stdio_sdk_client import stdio_client

pytestmark = [
    pytest.mark.slow,
    # The SDK's client warns that 2026-07-28 deprecates logging; handshake-era clients still use it.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


async def _is_left_out(client) -> bool:
    """Whether the server has read the broken file and left it out (so logged its warning):
    asked for by id, it is invalid (-32002), no longer unknown (-32001)."""
    refused = await client.call_tool("workflow_get", {"id": "broken"})
    return refused.is_error and "-32002" in refused.content[0].text


async def _left_out_file_logged(project, tmp_path, level: str) -> list:
    """The log messages a client at ``level`` gets while a broken workflow file is left out."""
    received: list = []

    async def on_log(params) -> None:
        received.append(params)

    client = stdio_client(project, tmp_path, "legacy")
    client.logging_callback = on_log
    async with client:
        assert client.server_capabilities.logging is not None
        await client.set_logging_level(level)
        (project / "workflows" / "broken.json").write_text('{"id": "broken", "steps": [')
        # Until the file was read (re-scans come at most every 2 s) and, at a level that lets
        # the warning through, until it came: at "error" nothing is to come, so the wait ends
        # with the scan, not after the whole bound.
        awaited = level in ("debug", "info", "notice", "warning")
        with anyio.move_on_after(8):
            while not await _is_left_out(client) or (
                awaited and not any("broken" in str(p.data) for p in received)
            ):
                await anyio.sleep(0.3)
        assert await _is_left_out(client)
        await anyio.sleep(1.0)  # a message sent with the scan, wrongly or not, is here by now
    return received


async def test_a_warning_reaches_a_client_that_asked_for_warnings(project, tmp_path):
    received = await _left_out_file_logged(project, tmp_path, "warning")
    left_out = [p for p in received if "left out invalid workflow file" in str(p.data)]
    assert left_out, received
    assert left_out[0].level == "warning" and left_out[0].logger == "workrail_mcp"
    assert "broken.json" in left_out[0].data


async def test_a_client_at_error_level_gets_no_warnings(project, tmp_path):
    received = await _left_out_file_logged(project, tmp_path, "error")
    assert [p for p in received if p.level == "warning"] == []


async def test_a_level_that_does_not_exist_is_refused(project, tmp_path):
    async with stdio_client(project, tmp_path, "legacy") as client:
        with pytest.raises(MCPError) as raised:
            await client.session.send_request(
                Request(method="logging/setLevel", params={"level": "loud"}), EmptyResult
            )
        assert raised.value.error.code == -32602


async def test_the_stateless_revision_has_no_set_level(project, tmp_path):
    async with stdio_client(project, tmp_path, "2026-07-28") as client:
        assert client.server_capabilities.logging is None
        with pytest.raises(MCPError) as raised:
            await client.set_logging_level("debug")
        assert raised.value.error.code == -32601


def test_a_level_that_is_no_string_is_refused_without_a_traceback(project, tmp_path):
    """A list or an object used to fail as a dictionary key: −32603 and a traceback on stderr.
    (Raw lines: the SDK's client does not send such params as given.)"""
    levels = [["debug"], {"debug": True}, 3]
    lines = [json.dumps(INITIALIZE), json.dumps(INITIALIZED)] + [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 10 + n,
                "method": "logging/setLevel",
                "params": {"level": level},
            }
        )
        for n, level in enumerate(levels)
    ]
    messages, _, stderr = run_stdio(project, tmp_path, lines)
    answers = by_id(messages)
    for n in range(len(levels)):
        error = answers[10 + n]["error"]
        assert error["code"] == -32602, error
        assert "level must be one of debug" in error["data"]["details"]
    assert "Traceback" not in stderr
