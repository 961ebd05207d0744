"""2026-07-28: what a tool asks its client (the client's model under --sampling, a person's
confirmation) rides ``input_required`` results, and the client's retried call carries the answer.

The real server process over stdio and HTTP, with the SDK's client pinned to 2026-07-28: it
answers input-required results by itself, through the same sampling and elicitation callbacks
as on the handshake revisions — so these are the handshake tests' scripted model and person,
and the same outcomes: the same checks, limits and records.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp_types import CreateMessageResult, InputRequiredResult, TextContent

from tests.mcp.conftest import write_workflow
from tests.mcp.scripted_peer import Model, Person, SharedServers
from tests.mcp.test_client_model import FLOW
from tests.mcp.test_confirmation import NOTES
from tests.mcp.test_run_model import CONFIRMED_FLOW, PLAN, RUN_FLOW
from workrail_engine.answers.model_loop import ModelLimits
from workrail_engine.catalog import Catalog, Source
from workrail_engine.runs import RunService
from workrail_mcp import client_waits, create_server, input_rounds

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

MODERN = "2026-07-28"
TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


@pytest.fixture(scope="module")
def shared_project(shared_project: Path) -> Path:
    """The module's kept servers serve the sessions' sampled flow and the runs' flows too."""
    for flow in (FLOW, RUN_FLOW, CONFIRMED_FLOW):
        write_workflow(shared_project / "workflows", flow)
    return shared_project


@asynccontextmanager
async def connected(
    servers: SharedServers, transport: str, *options: str, **peer: Any
) -> AsyncIterator[Any]:
    """A client of the module's kept server of ``options``, pinned to 2026-07-28."""
    async with servers.connected(*options, transport=transport, mode=MODERN, **peer) as (
        client,
        _,
    ):
        yield client


async def _call(client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def _start(client, project, workflow: str) -> dict:
    return await _call(
        client,
        "start_workflow",
        {"workflowId": workflow, "workspacePath": str(project), "goal": "rounds"},
    )


@TRANSPORTS
async def test_the_model_answers_through_input_rounds(shared_servers, transport):
    # The draft fails its check once and is sent back with the problems, then passes.
    model = Model("a plan", "DRAFT: a plan", "LGTM, good")
    async with connected(shared_servers, transport, "--sampling", model=model) as client:
        started = await _start(client, shared_servers.project, "sampled-flow")
        assert started["pending"]["stepId"] == "ship"
        assert started["sampling"]["calls"] == 3
        assert started["sampling"]["tokens"] == 300 + 300 + 2000
        assert "sampling: false" in started["sampling"]["stopped"]
        assert model.requests[0].max_tokens == 300
        retry = model.requests[1].messages[0].content.text
        assert "sent back" in retry and "Start with DRAFT" in retry
        run = await _call(client, "get_workflow_run", {"workflow_id": started["runId"]})
        results = run["step_results"]
        assert [r["step_name"] for r in results] == ["draft", "review"]
        assert results[1]["notes"] == "LGTM, good"
        assert results[1]["model_usage"]["calls"] == 3


async def test_a_round_driven_by_hand_and_its_state_used_once(shared_servers):
    """The client's manual way (``allow_input_required``): the request as sent, the sealed
    state, the answer carried back; the same state again is refused."""
    project = shared_servers.project
    arguments = {"workflowId": "sampled-flow", "workspacePath": str(project), "goal": "by hand"}
    async with connected(shared_servers, "stdio", "--sampling", model=Model()) as c:
        first = await c.session.call_tool("start_workflow", arguments, allow_input_required=True)
        assert isinstance(first, InputRequiredResult), first
        [(key, request)] = first.input_requests.items()
        assert request.method == "sampling/createMessage" and request.params.max_tokens == 300
        assert "Write a draft." in request.params.messages[0].content.text
        assert "rs-" not in first.request_state  # sealed by the SDK: our id is not readable
        answer = CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="no draft"), model="hand"
        )
        second = await c.session.call_tool(
            "start_workflow",
            arguments,
            input_responses={key: answer},
            request_state=first.request_state,
            allow_input_required=True,
        )
        # Sent back once with the problem: the next round asks again, with the problem in it.
        assert isinstance(second, InputRequiredResult)
        [(_, retry)] = second.input_requests.items()
        assert "Start with DRAFT" in retry.params.messages[0].content.text
        with pytest.raises(MCPError) as refused:
            await c.session.call_tool(
                "start_workflow",
                arguments,
                input_responses={key: answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
        assert refused.value.error.code == -32602


async def test_the_model_stops_at_the_limit_and_without_the_flag(shared_servers):
    project = shared_servers.project
    model = Model("DRAFT", "LGTM")
    async with connected(
        shared_servers, "stdio", "--sampling", "--sampling-calls", "1", model=model
    ) as client:
        started = await _start(client, project, "sampled-flow")
        assert started["pending"]["stepId"] == "review" and started["sampling"]["calls"] == 1
        assert "limit" in started["sampling"]["stopped"]
    idle = Model("DRAFT", "LGTM")
    async with connected(shared_servers, "stdio", model=idle) as client:
        started = await _start(client, project, "sampled-flow")
        assert started["pending"]["stepId"] == "draft" and "sampling" not in started
    assert len(model.requests) == 1 and idle.requests == []


async def _answer(client, token: str, notes: str = NOTES) -> dict:
    return await _call(
        client, "continue_workflow", {"continueToken": token, "output": {"notesMarkdown": notes}}
    )


@TRANSPORTS
async def test_a_confirmation_asked_through_input_rounds(shared_servers, transport):
    project = shared_servers.project
    person = Person(
        {"decision": "reject", "comment": "you missed the security requirement"},
        {"decision": "approve", "comment": "looks right"},
    )
    async with connected(shared_servers, transport, person=person) as client:
        token = (await _start(client, project, "test-flow"))["continueToken"]
        blocked = await _answer(client, token, "short")  # fails its checks: nobody is asked
        assert blocked["kind"] == "blocked" and person.asked == []
        rejected = await _answer(client, token)
        assert rejected["kind"] == "blocked" and rejected["pending"]["stepId"] == "understand"
        blocker = rejected["blockers"]["blockers"][0]
        assert blocker["code"] == "USER_ONLY_DEPENDENCY"
        assert "you missed the security requirement" in blocker["message"]
        moved = await _answer(client, token, NOTES + " Also security.")
        assert moved["pending"]["stepId"] == "implement"
        assert moved["confirmation"]["action"] == "approve"
        assert moved["confirmation"]["comment"] == "looks right"
        assert moved["confirmation"]["by"] == "the user of mcp"  # the request's clientInfo
        assert len(person.asked) == 2
        assert "Understand the task" in person.asked[0].message
        assert person.asked[0].requested_schema["properties"]["decision"]["enum"] == [
            "approve",
            "reject",
        ]
        again = await _answer(client, token, NOTES + " Also security.")  # a replay: not asked
        assert again["outcome"] == "replayed" and len(person.asked) == 2
        run = await _call(client, "get_workflow_run", {"workflow_id": moved["runId"]})
        recorded = run["step_results"][0]
        assert recorded["confirmation"]["action"] == "approve" and recorded["confirmation"]["at"]


async def test_without_the_capability_the_step_moves_on_as_before(shared_servers):
    async with connected(shared_servers, "stdio") as client:
        token = (await _start(client, shared_servers.project, "test-flow"))["continueToken"]
        moved = await _answer(client, token)
        assert moved["pending"]["stepId"] == "implement" and "confirmation" not in moved


@pytest.fixture
def in_memory(project, tmp_path):
    """The server in this process (its limits can be lowered), as a 2026-07-28 client sees it."""
    write_workflow(project / "workflows", FLOW)
    service = RunService(project, allow_commands=False, home=tmp_path / "home")
    server = create_server(
        Catalog([Source("project", project / "workflows")]),
        run_service=service,
        model_limits=ModelLimits(),
    )
    return lambda: Client(server, mode=MODERN, sampling_callback=Model())


def _start_by_hand(client, project, goal: str):
    arguments = {"workflowId": "sampled-flow", "workspacePath": str(project), "goal": goal}
    return client.session.call_tool("start_workflow", arguments, allow_input_required=True)


async def test_a_round_not_answered_in_time_is_given_up(in_memory, project, monkeypatch):
    monkeypatch.setattr(input_rounds, "ROUND_TIMEOUT_SECONDS", 0.3)
    async with in_memory() as client:
        first = await _start_by_hand(client, project, "left waiting")
        assert isinstance(first, InputRequiredResult)
        await anyio.sleep(1.0)  # the call went on without the answer and ended
        [(key, _)] = first.input_requests.items()
        answer = CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="DRAFT late"), model="late"
        )
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool(
                "start_workflow",
                {
                    "workflowId": "sampled-flow",
                    "workspacePath": str(project),
                    "goal": "left waiting",
                },
                input_responses={key: answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
        assert refused.value.error.code == -32602
        assert "no longer waiting" in refused.value.error.data["details"]


async def test_calls_beyond_the_waiting_bound_ask_nothing(in_memory, project, monkeypatch):
    monkeypatch.setattr(client_waits, "MAX_WAITING_CALLS", 1)
    async with in_memory() as client:
        first = await _start_by_hand(client, project, "waits")
        assert isinstance(first, InputRequiredResult)
        second = await _start_by_hand(client, project, "beyond the bound")
        assert not isinstance(second, InputRequiredResult) and not second.is_error
        assert second.structured_content["pending"]["stepId"] == "draft"
        assert "sampling" not in second.structured_content


# --- a run_workflow run's prompt steps (the same loop and confirmation path as sessions) -------


@TRANSPORTS
async def test_a_runs_steps_through_input_rounds(shared_servers, transport):
    model = Model("DRAFT: cache the index", "LGTM, good")
    async with connected(
        shared_servers, transport, "--sampling", "--allow-commands", model=model
    ) as client:
        run = await _call(
            client,
            "run_workflow",
            {
                "workflow_name": "sampled-run",
                "parameters": {"topic": "caching"},
                "wait_seconds": 20,
            },
        )
        assert run["status"] == "waiting" and run["waiting"]["step_key"] == "ship"
        assert run["sampling"]["calls"] == 2 and "sampling: false" in run["sampling"]["stopped"]
        assert "Write a draft about caching." in model.requests[0].messages[0].content.text
        assert [r["step_name"] for r in run["step_results"]] == ["draft", "count", "review"]


async def test_a_runs_confirmation_and_the_model_through_input_rounds(shared_servers):
    model = Model(PLAN, "Built.")
    person = Person({"decision": "reject", "comment": "add the rollback plan"})
    async with connected(
        shared_servers, "stdio", "--sampling", model=model, person=person
    ) as client:
        run = await _call(
            client, "run_workflow", {"workflow_name": "confirmed-run", "wait_seconds": 20}
        )
        # The model's plan, put to the person, rejected: the step waits for the agent.
        assert run["status"] == "waiting" and run["waiting"]["step_key"] == "plan"
        assert len(person.asked) == 1 and PLAN in person.asked[0].message
        got = await _call(client, "get_workflow_run", {"workflow_id": run["workflow_id"]})
        refused = got["waiting"]["confirmations"]
        assert [(c["action"], c["comment"]) for c in refused] == [
            ("reject", "add the rollback plan")
        ]
        assert refused[0]["by"] == "the user of mcp"
