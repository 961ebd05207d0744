"""--sampling: a session's prompt steps answered by the client's model (`sampling/createMessage`).

The real server process over stdio and HTTP; the SDK client's sampling callback is a scripted
"model" whose answers pass, fail a check once, or never pass.
"""

from __future__ import annotations

import httpx2
import pytest

from tests.mcp.conftest import write_workflow
from tests.mcp.scripted_peer import Model, connected

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

FLOW = {
    "id": "sampled-flow",
    "name": "Sampled",
    "description": "Two steps a model may do, one it may not",
    "version": "1.0.0",
    "steps": [
        {
            "id": "draft",
            "title": "Draft",
            "prompt": "Write a draft.",
            "validationCriteria": [
                {"type": "contains", "value": "DRAFT", "message": "Start with DRAFT"}
            ],
            "sampling": {"maxTokens": 300},
        },
        {
            "id": "review",
            "title": "Review",
            "prompt": "Review the draft.",
            "validationCriteria": [{"type": "contains", "value": "LGTM", "message": "Say LGTM"}],
        },
        {"id": "ship", "title": "Ship", "prompt": "Push the change.", "sampling": False},
    ],
}

# A step that must set a declared variable, then the step its value decides, kept for the agent.
SIZED_FLOW = {
    "id": "sized-flow",
    "name": "Sized",
    "description": "A step that sets a declared context variable, and the step it decides",
    "version": "1.0.0",
    "context": {
        "size": {"type": "string", "enum": ["small", "large"], "description": "How big it is"}
    },
    "steps": [
        {"id": "triage", "title": "Triage", "prompt": "Size the task.", "sets": ["size"]},
        {
            "id": "deep",
            "title": "Deep review",
            "prompt": "Review it deeply.",
            "runCondition": {"var": "size", "equals": "large"},
            "sampling": False,
        },
        {"id": "ship", "title": "Ship", "prompt": "Push the change.", "sampling": False},
    ],
}


def sized(notes: str, context: str) -> str:
    """A model's reply to the sized flow's triage: ``notes``, then the block of ``context``."""
    return f"{notes}\n\n```context\n{context}\n```\n"


@pytest.fixture(scope="module")
def shared_project(shared_project):
    """The module's kept servers serve the flow and its opted-out copy too."""
    write_workflow(shared_project / "workflows", FLOW)
    write_workflow(shared_project / "workflows", {**FLOW, "id": "kept-flow", "sampling": False})
    write_workflow(shared_project / "workflows", SIZED_FLOW)
    return shared_project


async def _start(client, project, workflow: str = "sampled-flow") -> dict:
    started = await client.call_tool(
        "start_workflow",
        {"workflowId": workflow, "workspacePath": str(project), "goal": "let the model work"},
    )
    assert not started.is_error, started.content[0].text
    return started.structured_content


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_model_does_the_steps_it_may_and_stops_before_ship(
    shared_servers, shared_project, transport
):
    model = Model("DRAFT: a plan", "LGTM, good")
    async with shared_servers.connected("--sampling", model=model, transport=transport) as (
        client,
        dashboard,
    ):
        started = await _start(client, shared_project)
        assert started["pending"]["stepId"] == "ship"
        assert started["sampling"]["calls"] == 2
        assert started["sampling"]["tokens"] == 300 + 2000  # the step's maxTokens, the default
        assert "sampling: false" in started["sampling"]["stopped"]
        first = model.requests[0]
        assert first.max_tokens == 300 and "Write a draft." in first.messages[0].content.text
        assert "validation criteria" in first.system_prompt
        run = await client.call_tool("get_workflow_run", {"workflow_id": started["runId"]})
        results = run.structured_content["step_results"]
        assert [r["step_name"] for r in results] == ["draft", "review"]
        assert results[1]["model_usage"]["calls"] == 2 and results[1]["notes"] == "LGTM, good"
        if dashboard:  # the run's page on the HTTP server's dashboard
            page = httpx2.get(f"{dashboard}/runs/{started['runId']}", timeout=10)
            assert "Answered by the client's model (scripted)" in page.text
            assert "the run has used 2 calls, 2300 tokens" in page.text


async def test_an_answer_that_fails_a_check_is_sent_back_once(shared_servers, shared_project):
    model = Model("a plan", "DRAFT: a plan", "LGTM")
    async with shared_servers.connected("--sampling", model=model) as (client, _):
        started = await _start(client, shared_project)
        assert started["pending"]["stepId"] == "ship" and started["sampling"]["calls"] == 3
        retry = model.requests[1].messages[0].content.text
        assert "sent back" in retry and "Start with DRAFT" in retry


async def test_the_model_sets_a_steps_declared_context_checked_as_the_agents(
    shared_servers, shared_project
):
    model = Model(
        sized("Too big to say.", '{"size": "huge"}'),
        sized("It touches every module.", '{"size": "large"}'),
    )
    async with shared_servers.connected("--sampling", model=model) as (client, _):
        started = await _start(client, shared_project, "sized-flow")
        # the model's value decided the next step: the deep review, kept for the agent
        assert started["pending"]["stepId"] == "deep", started
        assert started["sampling"]["calls"] == 2
        asked = model.requests[0].messages[0].content.text
        assert '- size (How big it is): one of "small", "large"' in asked
        assert '```context\n{"size": "…"}\n```' in asked
        retry = model.requests[1].messages[0].content.text
        assert "sent back" in retry and '"huge" is not one of "small" or "large"' in retry
        run = await client.call_tool("get_workflow_run", {"workflow_id": started["runId"]})
        triage = run.structured_content["step_results"][0]
        assert triage["notes"] == "It touches every module."  # the block is not in the notes


async def test_answers_that_never_pass_leave_the_step_to_the_agent_and_still_count(
    project, tmp_path
):
    write_workflow(project / "workflows", FLOW)
    model = Model("no", "still no", "LGTM")
    async with connected(project, tmp_path, "--sampling", model=model) as (client, _):
        started = await _start(client, project)
        assert started["pending"]["stepId"] == "draft"
        assert started["sampling"]["calls"] == 2  # one answer and one retry, no more
        assert "failed its checks" in started["sampling"]["stopped"]
        assert len(model.requests) == 2
    # A new server process: the two calls whose answers were sent back still count.
    async with connected(project, tmp_path, "--sampling", model=model) as (client, _):
        run = await client.call_tool("get_workflow_run", {"workflow_id": started["runId"]})
        assert run.structured_content["sampling"] == {"calls": 2, "tokens": 600}
        # The agent answers as today; the model is asked again for the next step, and the run's
        # count goes on from the answers sent back.
        moved = await client.call_tool(
            "continue_workflow",
            {
                "continueToken": started["continueToken"],
                "output": {"notesMarkdown": "DRAFT by the agent"},
            },
        )
        assert moved.structured_content["pending"]["stepId"] == "ship"
        assert moved.structured_content["sampling"]["calls"] == 3
        assert moved.structured_content["sampling"]["tokens"] == 600 + 2000


async def test_limits_and_opt_outs(shared_servers, shared_project):
    model = Model("DRAFT", "LGTM")
    async with shared_servers.connected("--sampling", "--sampling-calls", "1", model=model) as (
        client,
        _,
    ):
        started = await _start(client, shared_project)
        assert started["pending"]["stepId"] == "review" and started["sampling"]["calls"] == 1
        assert "limit" in started["sampling"]["stopped"]
        kept = await _start(client, shared_project, "kept-flow")
        assert kept["pending"]["stepId"] == "draft" and kept["sampling"]["calls"] == 0
        assert len(model.requests) == 1


async def test_nothing_is_sampled_without_the_flag(shared_servers, shared_project):
    model = Model("DRAFT", "LGTM")
    async with shared_servers.connected(model=model) as (client, _):
        started = await _start(client, shared_project)
        assert started["pending"]["stepId"] == "draft" and "sampling" not in started
        assert model.requests == []
