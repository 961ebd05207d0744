"""A session step's confirmation asked of the person through `elicitation/create`.

The real server process (one kept for the module per set of options: the tests tell their
sessions apart by id), over stdio and over HTTP, with the SDK client's elicitation callback
standing in for the person (it approves, rejects with a comment, or is not there at all).
"""

from __future__ import annotations

import httpx2
import pytest

from tests.mcp.scripted_peer import Person

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

NOTES = "I read the requirements and listed them."


async def _start(client, project) -> str:
    started = await client.call_tool(
        "start_workflow",
        {"workflowId": "test-flow", "workspacePath": str(project), "goal": "confirm steps"},
    )
    assert started.structured_content["pending"]["stepId"] == "understand"
    return started.structured_content["continueToken"]


async def _answer(client, token: str, notes: str = NOTES) -> dict:
    answered = await client.call_tool(
        "continue_workflow", {"continueToken": token, "output": {"notesMarkdown": notes}}
    )
    assert not answered.is_error, answered.content[0].text
    return answered.structured_content


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_approval_moves_on_and_is_recorded_with_the_step(
    shared_servers, shared_project, transport
):
    person = Person({"decision": "approve", "comment": "looks right"})
    async with shared_servers.connected(transport=transport, person=person) as (
        client,
        dashboard,
    ):
        token = await _start(client, shared_project)
        # An answer that fails its checks is not put to the person.
        blocked = await _answer(client, token, "short")
        assert blocked["kind"] == "blocked" and person.asked == []
        moved = await _answer(client, token)
        assert moved["pending"]["stepId"] == "implement"  # deep-dive's condition is false
        assert moved["confirmation"]["action"] == "approve"
        assert moved["confirmation"]["comment"] == "looks right"
        assert moved["confirmation"]["by"] == "the user of mcp"
        assert len(person.asked) == 1
        asked = person.asked[0]
        assert "Understand the task" in asked.message and NOTES in asked.message
        assert asked.requested_schema["properties"]["decision"]["enum"] == ["approve", "reject"]
        # The same answer again is its replay: the person is not asked twice.
        assert (await _answer(client, token))["outcome"] == "replayed"
        assert len(person.asked) == 1
        run = await client.call_tool("get_workflow_run", {"workflow_id": moved["runId"]})
        recorded = run.structured_content["step_results"][0]
        assert recorded["step_name"] == "understand"
        assert recorded["confirmation"]["action"] == "approve" and recorded["confirmation"]["at"]
        if dashboard:  # the HTTP server's dashboard shows it on the run's page
            page = httpx2.get(f"{dashboard}/runs/{moved['runId']}", timeout=10)
            assert page.status_code == 200
            assert "Confirmed: approve by the user of mcp" in page.text
            assert "looks right" in page.text


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_rejection_keeps_the_step_pending_with_the_comment(
    shared_servers, shared_project, transport
):
    person = Person(
        {"decision": "reject", "comment": "you missed the security requirement"},
        {"action": "decline"},
        {"decision": "approve"},
    )
    async with shared_servers.connected(transport=transport, person=person) as (
        client,
        dashboard,
    ):
        token = await _start(client, shared_project)
        rejected = await _answer(client, token)
        assert rejected["kind"] == "blocked" and rejected["pending"]["stepId"] == "understand"
        blocker = rejected["blockers"]["blockers"][0]
        assert blocker["code"] == "USER_ONLY_DEPENDENCY"
        assert "you missed the security requirement" in blocker["message"]
        assert rejected["confirmation"]["action"] == "reject"
        # The refusal is recorded with the step that stays pending.
        run = await client.call_tool("get_workflow_run", {"workflow_id": rejected["runId"]})
        pending = run.structured_content["waiting"]["confirmations"]
        assert [(c["action"], c["comment"]) for c in pending] == [
            ("reject", "you missed the security requirement")
        ]
        assert pending[0]["by"] == "the user of mcp" and pending[0]["at"] > 0
        declined = await _answer(client, token, NOTES + " Also security.")
        assert declined["kind"] == "blocked" and declined["confirmation"]["action"] == "declined"
        moved = await _answer(client, token, NOTES + " Also security, really.")
        assert moved["pending"]["stepId"] == "implement"
        assert len(person.asked) == 3
        # Every reply shows in the step's history, oldest first.
        run = await client.call_tool("get_workflow_run", {"workflow_id": moved["runId"]})
        replies = run.structured_content["step_results"][0]["confirmations"]
        assert [c["action"] for c in replies] == ["reject", "declined", "approve"]
        if dashboard:
            page = httpx2.get(f"{dashboard}/runs/{moved['runId']}", timeout=10).text
            assert "Rejected by the user of mcp" in page
            assert "you missed the security requirement" in page
            assert "Confirmation declined by the user of mcp" in page


async def test_a_comment_longer_than_the_form_allows_is_cut_before_it_is_stored(
    shared_servers, shared_project
):
    person = Person({"decision": "reject", "comment": "x" * 5000})
    async with shared_servers.connected(person=person) as (client, _):
        rejected = await _answer(client, await _start(client, shared_project))
        assert len(rejected["confirmation"]["comment"]) == 2000
        run = await client.call_tool("get_workflow_run", {"workflow_id": rejected["runId"]})
        stored = run.structured_content["waiting"]["confirmations"][0]["comment"]
        assert stored == "x" * 2000


async def test_without_the_capability_the_step_moves_on_as_before(shared_servers, shared_project):
    async with shared_servers.connected() as (client, _):
        token = await _start(client, shared_project)
        moved = await _answer(client, token)
        assert moved["pending"]["stepId"] == "implement"
        assert "confirmation" not in moved
