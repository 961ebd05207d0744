"""A tool call waiting for its client's reply to a confirmation (`elicitation/create`): a reply
the server cannot use ends the wait at once, no reply ends it at the time-out; either way the call
answers that the step was not confirmed (`ClientDidNotReply`, −32009).

The bounds on how many calls may wait, and that other clients are served meanwhile, are proved
over HTTP in ``test_http_hostile.py``."""

from __future__ import annotations

import json
import time

import anyio
import pytest
from mcp import Client

from tests.mcp.test_confirmation import NOTES
from tests.mcp.test_run_recovery import StdioSession
from workrail_engine.catalog import Catalog, Source
from workrail_engine.runs import RunService
from workrail_mcp import client_waits, create_server

pytestmark = pytest.mark.slow

ELICITING = {"elicitation": {}}
# Replies no request of ours can take: a result that is no object, a lone surrogate escape.
UNUSABLE = (
    b'{"jsonrpc": "2.0", "id": %d, "result": 42}',
    b'{"jsonrpc": "2.0", "id": %d, "result": {"action": "accept", '
    b'"content": {"decision": "\\ud800"}}}',
)


def _started(session: StdioSession, project) -> dict:
    return session.tool(
        "start_workflow",
        {"workflowId": "test-flow", "workspacePath": str(project), "goal": "confirm"},
    )


def _error_of(result) -> dict:
    """The `{code, message, data}` of an `isError` tool result (its one text block's JSON)."""
    content = result["content"] if isinstance(result, dict) else result.content
    text = content[0]["text"] if isinstance(content[0], dict) else content[0].text
    return json.loads(text)["error"]


def test_an_unusable_reply_to_a_confirmation_fails_the_call_at_once(project, tmp_path):
    """Each reply used to be dropped, and the call waited for its whole time-out."""
    session = StdioSession(project, tmp_path, options=(), capabilities=ELICITING)
    try:
        started = _started(session, project)
        token = started["continueToken"]
        for reply in UNUSABLE:
            call = session.start(
                "tools/call",
                {
                    "name": "continue_workflow",
                    "arguments": {"continueToken": token, "output": {"notesMarkdown": NOTES}},
                },
            )
            asked = session.receive(lambda m: m.get("method") == "elicitation/create")
            sent = time.monotonic()
            session.proc.stdin.write((reply % asked["id"]).decode() + "\n")
            session.proc.stdin.flush()
            answer = session.receive(
                lambda m, n=call: "method" not in m and m["id"] == n, seconds=20
            )
            assert time.monotonic() - sent < 10, "the call waited for its time-out"
            result = answer["result"]
            assert result.get("isError"), result
            error = _error_of(result)
            assert error["code"] == client_waits.ClientDidNotReply.code, error
            assert "not confirmed and stays pending" in error["message"]
        # The step is still pending: nothing was recorded as the person's reply.
        run = session.tool("get_workflow_run", {"workflow_id": started["runId"]})
        assert run["waiting"]["step"]["id"] == "understand", run["waiting"]
        assert "confirmations" not in run["waiting"] and run["step_results"] == []
    finally:
        session.kill()


async def test_a_confirmation_not_answered_in_time_is_not_given(project, tmp_path, monkeypatch):
    monkeypatch.setattr(client_waits, "ELICITATION_TIMEOUT_SECONDS", 0.3)
    monkeypatch.setattr("workrail_mcp.confirmation.ELICITATION_TIMEOUT_SECONDS", 0.3)
    server = create_server(
        Catalog([Source("project", project / "workflows")]),
        run_service=RunService(project, allow_commands=False, home=tmp_path / "home"),
    )

    async def never_answers(_context, _params):
        await anyio.sleep_forever()

    async with Client(server, mode="legacy", elicitation_callback=never_answers) as client:
        started = await client.call_tool(
            "start_workflow",
            {"workflowId": "test-flow", "workspacePath": str(project), "goal": "confirm"},
        )
        token = started.structured_content["continueToken"]
        with anyio.fail_after(10):
            answered = await client.call_tool(
                "continue_workflow",
                {"continueToken": token, "output": {"notesMarkdown": NOTES}},
            )
        assert answered.is_error
        error = _error_of(answered)
        assert error["code"] == -32009 and error["data"]["reason"] == "timeout", error
        assert "did not reply to the confirmation request" in error["message"]
        assert "within 0.3 s" in error["message"]
