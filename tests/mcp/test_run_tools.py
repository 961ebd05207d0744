"""The run tools over a real stdio server process, driven by the SDK's own client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import server_env, write_workflow
from tests.mcp.tool_results import error_of

pytestmark = pytest.mark.slow
# The tests on the module's kept server run in the module's event loop, as its client does.
IN_THE_MODULES_LOOP = pytest.mark.asyncio(loop_scope="module")

AGENT_FLOW = {
    "id": "agent-flow",
    "name": "Agent flow",
    "description": "a prompt step then a command",
    "version": "1.0.0",
    "steps": [
        {
            "id": "plan",
            "title": "Plan",
            "prompt": "Write a plan for {{parameters.topic}}",
            "validationCriteria": [
                {"type": "contains", "value": "PLAN", "message": "Start with PLAN"}
            ],
        },
        {"id": "echo", "title": "Echo", "run": {"command": ["echo", "{{steps.plan.output}}"]}},
    ],
    "parameters": {
        "type": "object",
        "required": ["topic"],
        "properties": {"topic": {"type": "string"}},
    },
}
COMMANDS = {
    "id": "commands",
    "name": "Commands",
    "description": "three commands",
    "version": "1.0.0",
    "steps": [
        {
            "id": f"step{i}",
            "title": f"step {i}",
            "run": {"command": [sys.executable, "-c", "import time; time.sleep(0.2)"]},
        }
        for i in range(3)
    ],
}
SLOW = {
    "id": "slow-flow",
    "name": "Slow",
    "description": "sleeps",
    "version": "1.0.0",
    "steps": [
        {
            "id": "nap",
            "title": "nap",
            "run": {"command": [sys.executable, "-c", "import time; time.sleep(60)"]},
        }
    ],
}

STOP = {"kind": "wr.loop_control", "decision": "stop"}
LOOP_CONTROL = {"contractRef": "wr.contracts.loop_control", "required": True}
BY_ARTIFACT = {
    "type": "while",
    "conditionSource": {"kind": "artifact_contract", "contractRef": "wr.contracts.loop_control"},
}
TWO_DECIDED_LOOPS = {
    "id": "two-decided-loops",
    "name": "Two decided loops",
    "description": "a loop the agent stops, a command, a second loop the agent decides",
    "version": "1.0.0",
    "steps": [
        {
            "id": "first",
            "type": "loop",
            "loop": BY_ARTIFACT,
            "body": [
                {
                    "id": "decide",
                    "title": "Decide",
                    "prompt": "Go on?",
                    "outputContract": LOOP_CONTROL,
                }
            ],
        },
        {"id": "middle", "title": "Middle", "run": {"command": ["true"]}},
        {
            "id": "second",
            "type": "loop",
            "loop": BY_ARTIFACT,
            "body": [
                {"id": "again", "title": "Again", "prompt": "More?", "outputContract": LOOP_CONTROL}
            ],
        },
    ],
}
NAP_SECONDS = 1.5  # longer than two tool calls take, so that the first answer's reply sees it
ASK_NAP_ASK = {
    "id": "ask-nap-ask",
    "name": "Ask, nap, ask",
    "description": "a prompt step, a command that takes a while, a prompt step",
    "version": "1.0.0",
    "steps": [
        {"id": "ask", "title": "Ask", "prompt": "Say go"},
        {
            "id": "nap",
            "title": "nap",
            "run": {"command": [sys.executable, "-c", f"import time; time.sleep({NAP_SECONDS})"]},
        },
        {"id": "again", "title": "Again", "prompt": "Say go again"},
    ],
}


@pytest.fixture
def run_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for flow in (AGENT_FLOW, COMMANDS, SLOW):
        write_workflow(root / "workflows", flow)
    return root


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The flows in the project of the module's kept servers (without flags, then with
    `--allow-commands`), which the tests that need no fresh process share, telling their runs
    apart by id."""
    root = tmp_path_factory.mktemp("run-tools") / "project"
    for flow in (AGENT_FLOW, COMMANDS, SLOW, TWO_DECIDED_LOOPS, ASK_NAP_ASK, TWO_QUESTIONS):
        write_workflow(root / "workflows", flow)
    return root


@IN_THE_MODULES_LOOP
async def test_commands_refused_without_the_flag_but_dry_run_allowed(shared_servers, tmp_path):
    async with shared_servers.connected(mode="auto") as (c, _):
        refused = await c.call_tool("run_workflow", {"workflow_name": "commands"})
        error = error_of(refused)
        assert error["code"] == -32007 and "--allow-commands" in error["message"], error
        plan = await c.call_tool("run_workflow", {"workflow_name": "commands", "dry_run": True})
        assert not plan.is_error and plan.structured_content["dry_run"] is True
        assert [g["steps"][0]["step_name"] for g in plan.structured_content["groups"]] == [
            "step0",
            "step1",
            "step2",
        ]
        bad = await c.call_tool(
            "run_workflow", {"workflow_name": "agent-flow", "parameters": {"topic": 3}}
        )
        assert (
            error_of(bad)["code"] == -32602
            and "parameters.topic" in error_of(bad)["data"]["details"]
        )
        misspelt = await c.call_tool(
            "run_workflow",
            {"workflow_name": "agent-flow", "parameters": {"topik": "x"}, "dry_run": True},
        )
        refusal = error_of(misspelt)
        assert refusal["code"] == -32602, refusal
        assert "'topik' (did you mean 'topic'?)" in refusal["message"], refusal
        assert refusal["data"]["declared"] == ["topic"] and refusal["data"]["closest"] == ["topic"]
        missing = await c.call_tool("get_workflow_run", {"workflow_id": "wf-nope"})
        assert error_of(missing)["code"] == -32008
        outside = tmp_path / "outside.json"
        outside.write_text(json.dumps({**COMMANDS, "id": "outside"}))
        escaped = await c.call_tool(
            "run_workflow", {"workflow_name": str(outside), "dry_run": True}
        )
        assert (
            error_of(escaped)["code"] == -32007
            and "outside the workflow directories" in error_of(escaped)["message"]
        )
        by_path = await c.call_tool(
            "run_workflow",
            {
                "workflow_name": str(shared_servers.project / "workflows" / "commands.json"),
                "dry_run": True,
            },
        )
        assert by_path.structured_content["workflow_name"] == "commands"


@IN_THE_MODULES_LOOP
async def test_a_resent_answer_is_not_applied_to_the_next_step(shared_servers):
    """The same continue_workflow {workflow_id, output} sent twice (a retry after a lost reply)
    is a replay: never applied to the step the run waits on next."""
    async with shared_servers.connected(mode="auto") as (c, _):
        started = await c.call_tool("run_workflow", {"workflow_name": "two-questions"})
        run_id = started.structured_content["workflow_id"]
        answer = {"workflow_id": run_id, "output": "forty-two", "wait_seconds": 10}
        first = (await c.call_tool("continue_workflow", answer)).structured_content
        assert first["outcome"] == "accepted" and first["waiting"]["step_key"] == "second"
        again = (await c.call_tool("continue_workflow", answer)).structured_content
        assert again["outcome"] == "replayed" and again["waiting"]["step_key"] == "second"
        assert "pass step_key 'second'" in again["message"]
        assert [r["step_name"] for r in again["step_results"]] == ["first"]
        keyed = {**answer, "step_key": "second"}
        done = (await c.call_tool("continue_workflow", keyed)).structured_content
        assert done["outcome"] == "accepted" and done["status"] == "success"
        stale = await c.call_tool(
            "continue_workflow", {**answer, "step_key": "first", "output": "x"}
        )
        assert stale.is_error and "answer not applied" in stale.content[0].text


@IN_THE_MODULES_LOOP
async def test_progress_per_step_and_running_count(shared_servers):
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with shared_servers.connected("--allow-commands") as (c, _):
        result = await c.call_tool(
            "run_workflow",
            {"workflow_name": "commands", "wait_seconds": 60},
            progress_callback=progress,
        )
        body = result.structured_content
        assert body["status"] == "success" and body["workflow_id"].startswith("wf-")
        assert body["steps_completed"] == body["steps_total"] == 3
        assert {"step_name", "status", "output", "duration"} <= set(body["step_results"][0])
        assert [done for done, _, _ in seen][-1] == 3 and len(seen) >= 3
        slow = await c.call_tool(
            "run_workflow", {"workflow_name": "slow-flow", "wait_seconds": 0.5}
        )
        run_id = slow.structured_content["workflow_id"]
        assert slow.structured_content["status"] == "running"
        listed = await c.call_tool("list_workflows", {"include_running": True})
        assert listed.structured_content["running_count"] == 1
        assert [r["workflow_id"] for r in listed.structured_content["running"]] == [run_id]
        cancelled = await c.call_tool("cancel_workflow", {"workflow_id": run_id, "reason": "test"})
        assert cancelled.structured_content["status"] == "cancelled"
        state = await c.call_tool("get_workflow_run", {"workflow_id": run_id})
        assert state.structured_content["status"] == "cancelled"
        again = await c.call_tool("cancel_workflow", {"workflow_id": run_id})
        assert "already finished" in again.structured_content["message"]


@IN_THE_MODULES_LOOP
async def test_waiting_continue_blocked_continue_success(shared_servers):
    async with shared_servers.connected("--allow-commands") as (c, _):
        started = await c.call_tool(
            "run_workflow", {"workflow_name": "agent-flow", "parameters": {"topic": "caching"}}
        )
        body = started.structured_content
        assert (
            body["status"] == "waiting"
            and body["waiting"]["step"]["prompt"] == "Write a plan for caching"
        )
        run_id = body["workflow_id"]
        assert body["waiting"]["guidance"]["prompt"].endswith(
            f'call continue_workflow with workflow_id "{run_id}", step_key "plan" and your output '
            "(plus any context variables the step asked you to set)."
        )
        blocked = await c.call_tool(
            "continue_workflow", {"workflow_id": run_id, "output": "some thoughts"}
        )
        assert blocked.structured_content["outcome"] == "blocked"
        assert blocked.structured_content["issues"] == ["Start with PLAN"]
        assert blocked.structured_content["status"] == "waiting"
        done = await c.call_tool(
            "continue_workflow", {"workflow_id": run_id, "output": "PLAN: cache it"}
        )
        assert (
            done.structured_content["outcome"] == "accepted"
            and done.structured_content["status"] == "success"
        )
        assert done.structured_content["step_results"][-1]["output"]["stdout"] == "PLAN: cache it\n"
        finished = await c.call_tool("continue_workflow", {"workflow_id": run_id, "output": "PLAN"})
        assert error_of(finished)["code"] == -32005


@IN_THE_MODULES_LOOP
async def test_a_stop_before_a_command_does_not_skip_the_next_decided_loop(shared_servers):
    """The loop decision belongs to the answer that carried it: the command after the first
    loop leaves none, so the second loop starts (as `workflow_next` serves it)."""
    async with shared_servers.connected("--allow-commands") as (c, _):
        started = await c.call_tool("run_workflow", {"workflow_name": "two-decided-loops"})
        body = started.structured_content
        assert body["waiting"]["step_key"] == "decide[1]", body
        answer = {"workflow_id": body["workflow_id"], "output": "done", "wait_seconds": 30}
        stopped = await c.call_tool("continue_workflow", {**answer, "artifacts": [STOP]})
        after = stopped.structured_content
        assert after["outcome"] == "accepted" and after["status"] == "waiting", after
        assert after["waiting"]["step_key"] == "again[1]"
        done = await c.call_tool(
            "continue_workflow", {**answer, "step_key": "again[1]", "artifacts": [STOP]}
        )
        assert done.structured_content["status"] == "success"
        assert [r["step_name"] for r in done.structured_content["step_results"]] == [
            "decide[1]",
            "middle",
            "again[1]",
        ]


LOADED_ON_FIRST_USE = (
    "dbos",
    "sqlalchemy",
    "workrail_engine.runs.service",
    "workrail_engine.runs.command_process",
    "workrail_engine.sessions.service",
)


@pytest.mark.parametrize("edition", ["default", "upstream"])
def test_creating_the_server_imports_no_dbos_nor_sqlalchemy(run_project, tmp_path, edition):
    """The run store (DBOS, SQLAlchemy) loads on the first run or session, not at start-up: it
    was ~0.15-0.35 s of CPU of the server's cold start; nor do the run service
    (planner, walker, command runner) and the sessions engine."""
    code = (
        "import sys; from pathlib import Path\n"
        "import anyio\n"
        "from workrail_engine.catalog import Catalog\n"
        "from workrail_mcp.server import create_server\n"
        f"catalog = Catalog.default(Path({str(run_project)!r}))\n"
        "server = create_server(catalog, allow_commands=True,"
        f" tools_edition={edition!r})\n"
        f"print(sorted(m for m in {LOADED_ON_FIRST_USE!r} if m in sys.modules))\n"
        "catalog.entries()\n"
        "anyio.run(server.list_tools)\n"
        f"print(sorted(m for m in {LOADED_ON_FIRST_USE!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=server_env(tmp_path),
        check=True,
    )
    assert out.stdout.split("\n")[:2] == ["[]", "[]"], out.stdout


TWO_QUESTIONS = {
    "id": "two-questions",
    "name": "Two questions",
    "description": "two agent steps",
    "version": "1.0.0",
    "steps": [
        {"id": "first", "title": "First", "prompt": "Answer one"},
        {"id": "second", "title": "Second", "prompt": "Answer two"},
    ],
}


@IN_THE_MODULES_LOOP
async def test_a_resent_answer_follows_the_run_as_the_answer_it_repeats(shared_servers):
    """A retry after a lost reply gets the state that reply would have had: the service follows
    the run after a replay as after the answer itself (the CLI's `continue` waits the same way)."""
    async with shared_servers.connected("--allow-commands") as (c, _):
        started = await c.call_tool("run_workflow", {"workflow_name": "ask-nap-ask"})
        run_id = started.structured_content["workflow_id"]
        answer = {"workflow_id": run_id, "output": "go", "step_key": "ask", "wait_seconds": 0}
        first = (await c.call_tool("continue_workflow", answer)).structured_content
        assert first["outcome"] == "accepted" and first["status"] == "running", first
        again = await c.call_tool("continue_workflow", {**answer, "wait_seconds": 30})
        replayed = again.structured_content
        assert replayed["outcome"] == "replayed" and replayed["answered_step"] == "ask"
        assert replayed["status"] == "waiting" and replayed["waiting"]["step_key"] == "again"
