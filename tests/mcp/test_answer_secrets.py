"""What a person, the client and the client's model say about a step, through the real stdio
server: a declared secret in a confirmation's comment, the client's name or the model's name is
masked before it is stored or returned, in sessions as in runs; a model's answer longer than an
agent's may be is refused as the agent's is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_types import Implementation

from tests.engine.sessions.test_session_model_answers import FLOW as MODEL_FLOW
from tests.mcp.conftest import write_workflow
from tests.mcp.scripted_peer import Model, Person, connected
from tests.mcp.test_run_model import _call
from workrail_engine.limits import MAX_ANSWER_CHARS

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

SECRET = "hunter2-answer-secret-7f3a"
# A checked step a person confirms (the model may do it), then one kept for the agent.
FLOW = {**MODEL_FLOW, "id": "secret-flow", "secrets": ["WR_ANSWER_SECRET"]}


@pytest.fixture
def secret_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The flow, and its secret in the environment the server is started with."""
    monkeypatch.setenv("WR_ANSWER_SECRET", SECRET)
    root = tmp_path / "project"
    write_workflow(root / "workflows", FLOW)
    return root


def _stored_bytes(home: Path) -> bytes:
    """Every file of the server's home (the run store and its journal), as bytes."""
    return b"".join(path.read_bytes() for path in sorted(home.rglob("*")) if path.is_file())


async def test_a_secret_in_what_the_person_client_and_model_say_is_masked(secret_project, tmp_path):
    model = Model("PLAN: one step.", "PLAN: the run's.", name=f"model-{SECRET}")
    person = Person(
        {"decision": "approve", "comment": f"fine, the key is {SECRET}"},
        {"decision": "approve", "comment": f"again {SECRET}"},
    )
    client_info = Implementation(name=f"client-{SECRET}", version="1.0")
    async with connected(
        secret_project,
        tmp_path,
        "--sampling",
        model=model,
        person=person,
        client_info=client_info,
    ) as (client, _):
        started = await _call(
            client,
            "start_workflow",
            {"workflowId": "secret-flow", "workspacePath": str(secret_project), "goal": "plan"},
        )
        assert started["pending"]["stepId"] == "ship", started
        ran = await _call(client, "run_workflow", {"workflow_name": "secret-flow"})
        assert ran["status"] == "waiting" and ran["waiting"]["step_key"] == "ship", ran
        assert len(person.asked) == 2 and not model.answers
        answers = [
            started,
            ran,
            await _call(client, "get_workflow_run", {"workflow_id": started["runId"]}),
            await _call(client, "get_workflow_run", {"workflow_id": ran["workflow_id"]}),
        ]
    for answer in answers[2:]:
        recorded = answer["step_results"][0]
        assert recorded["confirmation"]["comment"].endswith("***"), recorded
        assert recorded["confirmation"]["by"] == "the user of client-***"
        assert recorded["model_usage"]["model"] == "model-***"
    for answer in answers:
        assert SECRET not in json.dumps(answer)
    assert SECRET.encode() not in _stored_bytes(tmp_path / "home")


async def test_a_models_answer_is_bounded_as_an_agents_is(secret_project, tmp_path):
    too_long = "PLAN " + "x" * MAX_ANSWER_CHARS
    model = Model(too_long, too_long)
    person = Person()  # never asked: an answer that fails its checks is not put to a person
    async with connected(secret_project, tmp_path, "--sampling", model=model, person=person) as (
        client,
        _,
    ):
        started = await _call(
            client,
            "start_workflow",
            {"workflowId": "secret-flow", "workspacePath": str(secret_project), "goal": "plan"},
        )
        # sent back once with the bound, then left to the agent; nothing of it was kept
        assert started["pending"]["stepId"] == "plan"
        assert "failed its checks" in started["sampling"]["stopped"]
        retry = model.requests[1].messages[0].content.text
        assert f"at most {MAX_ANSWER_CHARS:,} are taken" in retry
        agent = await _call(
            client,
            "continue_workflow",
            {"continueToken": started["continueToken"], "output": {"notesMarkdown": too_long}},
        )
        assert agent["kind"] == "blocked"
        assert f"at most {MAX_ANSWER_CHARS:,} are taken" in json.dumps(agent["blockers"])
        run = await client.call_tool("get_workflow_run", {"workflow_id": started["runId"]})
        assert len(json.dumps(run.structured_content)) < 100_000
    assert person.asked == []
