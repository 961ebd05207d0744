"""A `run_workflow` run's prompt steps answered by the client's model (--sampling) and confirmed
by the person (`elicitation/create`).

The real server process over stdio and Streamable HTTP; the SDK client's sampling callback is a
scripted "model" (answers that pass, fail a check once, never pass) and its elicitation callback
a scripted person (approve, reject with a comment, decline).
"""

from __future__ import annotations

import httpx2
import pytest

from tests.mcp.conftest import write_workflow
from tests.mcp.scripted_peer import Model, Person, connected
from tests.mcp.test_client_model import FLOW, SIZED_FLOW, sized

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

# The sessions' flow with a command between its first two steps: a prompt step the model may
# do, a command, a prompt step it may do, one kept for the agent.
DRAFT, *REST = FLOW["steps"]
RUN_FLOW = {
    **FLOW,
    "id": "sampled-run",
    "steps": [
        {**DRAFT, "prompt": "Write a draft about {{parameters.topic}}."},
        {"id": "count", "title": "Count", "run": {"command": ["echo", "{{steps.draft.output}}"]}},
        *REST,
    ],
    "parameters": {"type": "object", "properties": {"topic": {"type": "string"}}},
}
# A prompt step whose confirmation is a person's, then one more.
CONFIRMED_FLOW = {
    "id": "confirmed-run",
    "name": "Confirmed run",
    "description": "A step the user must confirm",
    "version": "1.0.0",
    "steps": [
        {
            "id": "plan",
            "title": "Plan the change",
            "prompt": "Write the plan.",
            "requireConfirmation": True,
            "validationCriteria": [
                {"type": "contains", "value": "PLAN", "message": "Start with PLAN"}
            ],
        },
        {"id": "build", "title": "Build", "prompt": "Build it."},
    ],
}
PLAN = "PLAN: change the parser."


# The model's draft, then a command longer than the call waits.
SLOW_FLOW = {
    **RUN_FLOW,
    "id": "slow-run",
    "steps": [
        RUN_FLOW["steps"][0],
        {"id": "nap", "title": "Nap", "run": {"command": ["sleep", "60"]}},
        *REST,
    ],
}


FLOWS = (
    RUN_FLOW,
    CONFIRMED_FLOW,
    SLOW_FLOW,
    {**RUN_FLOW, "id": "kept-run", "sampling": False},
    SIZED_FLOW,
)


@pytest.fixture
def run_project(tmp_path):
    """The flows in a project of the test's own (for the servers it starts itself)."""
    root = tmp_path / "project"
    for flow in FLOWS:
        write_workflow(root / "workflows", flow)
    return root


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory):
    """The flows in the project of the module's kept servers: the tests that need no fresh
    process share one per set of options, telling their runs apart by id."""
    root = tmp_path_factory.mktemp("runs") / "project"
    for flow in FLOWS:
        write_workflow(root / "workflows", flow)
    return root


async def _call(client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def _run(client, workflow: str = "sampled-run") -> dict:
    arguments = {"workflow_name": workflow, "wait_seconds": 20}
    if workflow not in ("confirmed-run", "sized-flow"):
        arguments["parameters"] = {"topic": "caching"}
    return await _call(client, "run_workflow", arguments)


SAMPLING = ("--sampling", "--allow-commands")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_model_does_a_runs_steps_and_stops_before_ship(shared_servers, transport):
    model = Model("DRAFT: cache the index", "LGTM, good")
    async with shared_servers.connected(*SAMPLING, model=model, transport=transport) as (
        client,
        dashboard,
    ):
        run = await _run(client)
        assert run["status"] == "waiting" and run["waiting"]["step_key"] == "ship"
        assert "outcome" not in run  # a start, as without sampling
        assert run["sampling"]["calls"] == 2
        assert run["sampling"]["tokens"] == 300 + 2000  # the step's maxTokens, the default
        assert "sampling: false" in run["sampling"]["stopped"]
        first = model.requests[0]
        assert first.max_tokens == 300
        assert "Write a draft about caching." in first.messages[0].content.text
        assert "validation criteria" in first.system_prompt
        # The command between the two ran with the model's draft.
        assert [r["step_name"] for r in run["step_results"]] == ["draft", "count", "review"]
        assert run["step_results"][1]["output"]["stdout"] == "DRAFT: cache the index\n"
        got = await _call(client, "get_workflow_run", {"workflow_id": run["workflow_id"]})
        assert got["sampling"] == {"calls": 2, "tokens": 2300}
        review = got["step_results"][2]
        assert review["model_usage"] == {"calls": 2, "tokens": 2300, "model": "scripted"}
        assert got["step_results"][0]["model_usage"]["calls"] == 1
        if dashboard:  # the run's page on the HTTP server's dashboard
            page = httpx2.get(f"{dashboard}/runs/{run['workflow_id']}", timeout=10).text
            assert "Answered by the client's model (scripted)" in page
            assert '<dd class="sampling">2 calls, 2300 tokens</dd>' in page  # the run's totals


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_runs_answer_that_fails_a_check_is_sent_back_once(shared_servers, transport):
    model = Model("a plan", "DRAFT: a plan", "LGTM")
    async with shared_servers.connected(*SAMPLING, model=model, transport=transport) as (
        client,
        _,
    ):
        run = await _run(client)
        assert run["waiting"]["step_key"] == "ship" and run["sampling"]["calls"] == 3
        retry = model.requests[1].messages[0].content.text
        assert "sent back" in retry and "Start with DRAFT" in retry


async def test_a_run_still_running_when_the_wait_ends_is_left_to_the_agent(shared_servers):
    model = Model("DRAFT: nap first", "LGTM")
    async with shared_servers.connected(*SAMPLING, model=model) as (client, _):
        # The wait covers the run's start to its first prompt step, then runs out in full
        # after the model's answer (the nap takes 60 s): every second of it is the test's.
        arguments = {"workflow_name": "slow-run", "wait_seconds": 5}
        run = await _call(client, "run_workflow", {**arguments, "parameters": {"topic": "naps"}})
        assert run["status"] == "running" and run["sampling"]["calls"] == 1
        assert "still running" in run["sampling"]["stopped"]
        await _call(client, "cancel_workflow", {"workflow_id": run["workflow_id"]})


async def test_the_model_sets_a_runs_declared_context_and_no_other(shared_servers):
    model = Model(
        sized("Large, and approved.", '{"size": "large", "approved": true}'),
        sized("Large.", '{"size": "large"}'),
    )
    async with shared_servers.connected(*SAMPLING, model=model) as (client, _):
        run = await _run(client, "sized-flow")
        assert run["status"] == "waiting" and run["waiting"]["step_key"] == "deep", run
        assert run["sampling"]["calls"] == 2
        retry = model.requests[1].messages[0].content.text
        assert "this step sets only size; leave out approved" in retry
        assert (
            run["waiting"]["context"]["size"] == "large"
            and "approved" not in run["waiting"]["context"]
        )
        assert run["step_results"][0]["output"] == "Large."


async def test_a_runs_limits_and_opt_outs(shared_servers):
    model = Model("DRAFT", "LGTM")
    async with shared_servers.connected(*SAMPLING, "--sampling-calls", "1", model=model) as (
        client,
        _,
    ):
        run = await _run(client)
        assert run["waiting"]["step_key"] == "review" and run["sampling"]["calls"] == 1
        assert "limit" in run["sampling"]["stopped"]
        kept = await _run(client, "kept-run")
        assert kept["waiting"]["step_key"] == "draft" and kept["sampling"]["calls"] == 0
        assert len(model.requests) == 1


async def test_nothing_of_a_run_is_sampled_without_the_flag(shared_servers):
    model = Model("DRAFT", "LGTM")
    async with shared_servers.connected("--allow-commands", model=model) as (client, _):
        run = await _run(client)
        assert run["waiting"]["step_key"] == "draft" and "sampling" not in run
        assert model.requests == []


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_runs_confirmation_goes_to_the_person_and_every_reply_is_kept(
    shared_servers, transport
):
    person = Person(
        {"decision": "reject", "comment": "add the rollback plan"},
        {"action": "decline"},
        {"decision": "approve", "comment": "good now"},
    )
    async with shared_servers.connected(person=person, transport=transport) as (
        client,
        dashboard,
    ):
        run = await _run(client, "confirmed-run")
        run_id = run["workflow_id"]
        answer = {"workflow_id": run_id, "wait_seconds": 20}
        # An answer that fails its checks is not put to the person.
        blocked = await _call(client, "continue_workflow", {**answer, "output": "a plan"})
        assert blocked["outcome"] == "blocked" and person.asked == []
        rejected = await _call(client, "continue_workflow", {**answer, "output": PLAN})
        assert rejected["outcome"] == "blocked" and rejected["status"] == "waiting"
        assert rejected["confirmation"]["action"] == "reject"
        assert "add the rollback plan" in rejected["issues"][0]
        asked = person.asked[0]
        assert "Plan the change" in asked.message and PLAN in asked.message
        got = await _call(client, "get_workflow_run", {"workflow_id": run_id})
        pending = got["waiting"]["confirmations"]
        assert [(c["action"], c["comment"]) for c in pending] == [
            ("reject", "add the rollback plan")
        ]
        assert pending[0]["by"] == "the user of mcp" and pending[0]["at"] > 0
        if dashboard:  # under the step that still waits
            page = httpx2.get(f"{dashboard}/runs/{run_id}", timeout=10).text
            assert "Waiting for the agent" in page and "add the rollback plan" in page
        declined = await _call(
            client, "continue_workflow", {**answer, "output": PLAN + " With a rollback."}
        )
        assert declined["outcome"] == "blocked"
        assert declined["confirmation"]["action"] == "declined"
        moved = await _call(
            client, "continue_workflow", {**answer, "output": PLAN + " With a rollback, really."}
        )
        assert moved["outcome"] == "accepted" and moved["waiting"]["step_key"] == "build"
        assert len(person.asked) == 3
        plan = moved["step_results"][0]
        assert plan["confirmation"]["action"] == "approve"
        assert [c["action"] for c in plan["confirmations"]] == ["reject", "declined", "approve"]
        assert plan["confirmations"][0]["comment"] == "add the rollback plan"
        if dashboard:
            page = httpx2.get(f"{dashboard}/runs/{run_id}", timeout=10).text
            assert "Rejected by the user of mcp" in page and "add the rollback plan" in page
            assert "Confirmation declined by the user of mcp" in page
            assert "Confirmed: approve by the user of mcp" in page and "good now" in page


async def test_the_model_answers_and_the_person_confirms_a_runs_step(shared_servers):
    model = Model(PLAN, "Built.")
    person = Person({"decision": "approve"})
    async with shared_servers.connected("--sampling", model=model, person=person) as (
        client,
        _,
    ):
        run = await _run(client, "confirmed-run")
        assert run["status"] == "success" and run["sampling"]["calls"] == 2
        assert len(person.asked) == 1 and PLAN in person.asked[0].message
        assert run["step_results"][0]["confirmation"]["action"] == "approve"


async def test_without_a_person_the_model_stops_at_a_confirmed_step(shared_servers):
    model = Model(PLAN)
    async with shared_servers.connected("--sampling", model=model) as (client, _):
        run = await _run(client, "confirmed-run")
        assert run["waiting"]["step_key"] == "plan" and model.requests == []
        assert "needs a person's confirmation" in run["sampling"]["stopped"]
        moved = await _call(
            client,
            "continue_workflow",
            {"workflow_id": run["workflow_id"], "output": PLAN, "wait_seconds": 20},
        )  # without the capability the step moves on as before
        assert moved["outcome"] == "accepted" and "confirmation" not in moved["step_results"][0]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_runs_answers_that_never_pass_are_counted_and_left_to_the_agent(
    run_project, tmp_path, transport
):
    model = Model("no", "still no", "LGTM")
    async with connected(run_project, tmp_path, *SAMPLING, model=model, transport=transport) as (
        client,
        dashboard,
    ):
        run = await _run(client)
        assert run["status"] == "waiting" and run["waiting"]["step_key"] == "draft"
        assert run["sampling"]["calls"] == 2  # one answer and one retry, no more
        assert "failed its checks" in run["sampling"]["stopped"]
        run_id = run["workflow_id"]
        # The agent answers as today; the model does the next step it may, and the run's count
        # goes on from the answers sent back.
        moved = await _call(
            client,
            "continue_workflow",
            {"workflow_id": run_id, "output": "DRAFT by the agent", "wait_seconds": 20},
        )
        assert moved["outcome"] == "accepted" and moved["waiting"]["step_key"] == "ship"
        assert moved["answered_step"] == "draft"  # the agent's answer; the model did review
        assert moved["sampling"]["calls"] == 3
        if dashboard:  # the calls whose answers were sent back count on the run's page too
            page = httpx2.get(f"{dashboard}/runs/{run_id}", timeout=10).text
            assert '<dd class="sampling">3 calls, 2600 tokens</dd>' in page
    # Counted in the store: a new server process reads the same count.
    async with connected(run_project, tmp_path, *SAMPLING, model=Model()) as (client, _):
        got = await _call(client, "get_workflow_run", {"workflow_id": run_id})
        assert got["sampling"] == {"calls": 3, "tokens": 300 + 300 + 2000}
        assert "model_usage" not in got["step_results"][0]  # the agent's answer
