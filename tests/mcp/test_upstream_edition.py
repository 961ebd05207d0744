"""``workrail-mcp --tools upstream``: an agent written for upstream WorkRail 3.x works unchanged.

The agent (tests/mcp/upstream_agent.py) was first run against upstream v3.121.0 built from its
source (its transcript: tests/fixtures/upstream_sessions/agent_transcript_upstream.json); here it
walks our bundled ``ai-task-implementation`` through the real server process, over stdio in both
protocol eras and over Streamable HTTP, with the SDK's client. The tool list and the result and
error shapes are compared with what upstream answered (tests/fixtures/upstream_sessions/).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.mcp.conftest import server_env
from tests.mcp.upstream_agent import UpstreamAgent, verdict

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

UPSTREAM = Path(__file__).resolve().parents[1] / "fixtures" / "upstream_sessions"
UPSTREAM_TOOLS = [
    "list_workflows",
    "inspect_workflow",
    "start_workflow",
    "continue_workflow",
    "checkpoint_workflow",
    "resume_session",
]
WALKED = "ai-task-implementation"  # bundled: four prompt steps with validation criteria


def recorded(label: str) -> dict[str, Any]:
    return json.loads((UPSTREAM / f"{label}.json").read_text(encoding="utf-8"))


@pytest.fixture
def empty_project(tmp_path: Path) -> Path:
    """A project without workflows of its own: the bundled ones are served as shipped."""
    root = tmp_path / "project"
    (root / "workflows").mkdir(parents=True)
    return root


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's kept servers' project: no workflows of its own either."""
    root = tmp_path_factory.mktemp("upstream") / "project"
    (root / "workflows").mkdir(parents=True)
    return root


UPSTREAM_EDITION = ("--tools", "upstream")


def stdio(project: Path, tmp_path: Path, mode: str, *options: str, **env: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workrail_mcp", "--project", str(project), *options],
        env=server_env(tmp_path, **env),
        cwd=str(tmp_path),
    )
    return Client(params, mode=mode)


async def walk(client: Client, workspace: Path) -> dict[str, Any]:
    agent = UpstreamAgent(client, str(workspace), "add a --since flag to the export command")
    transcript = await agent.walk(WALKED)
    assert verdict(transcript) == [], transcript
    return vars(transcript)


async def test_the_environment_variable_chooses_the_edition(empty_project, tmp_path):
    async with stdio(empty_project, tmp_path, "legacy", WORKRAIL_TOOLS="upstream") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == UPSTREAM_TOOLS


async def test_tools_and_input_schemas_are_upstreams(shared_servers):
    """Same names, in upstream's order, with the same argument names and required ones."""
    theirs = {tool["name"]: tool for tool in recorded("tools_list")["tools"]}
    async with shared_servers.connected(*UPSTREAM_EDITION) as (client, _):
        ours = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(ours) == UPSTREAM_TOOLS
    for name in UPSTREAM_TOOLS:
        schema, upstream = ours[name].input_schema, theirs[name]["inputSchema"]
        assert set(schema["properties"]) == set(upstream["properties"]), name
        assert set(schema.get("required", [])) == set(upstream["required"]), name
        assert schema.get("additionalProperties") is False, name
        hints = ours[name].annotations
        assert hints.read_only_hint == theirs[name]["annotations"]["readOnlyHint"], name


def keys(value: dict[str, Any]) -> set[str]:
    return set(value)


async def test_results_have_upstreams_keys(shared_servers, tmp_path):
    """Every key upstream answered with is in our answer, for each kind of result."""
    ws = str(tmp_path)
    async with shared_servers.connected(*UPSTREAM_EDITION) as (client, _):

        async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
            result = await client.call_tool(tool, arguments)
            return bool(result.is_error), json.loads(result.content[0].text)

        _, tagged = await call("list_workflows", {"workspacePath": ws, "tags": ["planning"]})
        _, inspected = await call("inspect_workflow", {"workflowId": WALKED, "workspacePath": ws})
        _, started = await call(
            "start_workflow", {"workflowId": WALKED, "workspacePath": ws, "goal": "ship it"}
        )
        token = started["continueToken"]
        _, blocked = await call(
            "continue_workflow", {"continueToken": token, "intent": "advance", "output": {}}
        )
        _, reread = await call("continue_workflow", {"continueToken": token})
        _, checkpoint = await call(
            "checkpoint_workflow", {"checkpointToken": started["checkpointToken"]}
        )
        _, found = await call("resume_session", {"workspacePath": ws, "query": "ship"})
        errors = {
            "tampered_token": await call(
                "continue_workflow",
                {"continueToken": token[:-1] + ("A" if token[-1] != "A" else "B")},
            ),
            "malformed_token": await call("continue_workflow", {"continueToken": "ct_nonsense"}),
            "start_unknown": await call(
                "start_workflow", {"workflowId": "no-such-flow", "workspacePath": ws, "goal": "x"}
            ),
            "advance_with_resume_token": await call(
                "continue_workflow",
                {
                    "continueToken": checkpoint["resumeToken"],
                    "intent": "advance",
                    "output": {"notesMarkdown": "x"},
                },
            ),
        }
    pairs = [
        ("inspect_preview", inspected),
        ("start", started),
        ("advance_without_notes", blocked),
        ("rehydrate_continue_token", reread),
        ("checkpoint", checkpoint),
        ("resume_by_phrase", found),
    ]
    for label, ours in pairs:
        theirs = recorded(label)["response"]
        assert keys(theirs) <= keys(ours), (label, keys(theirs) - keys(ours))
        assert (theirs.get("pending") is None) == (ours.get("pending") is None), label
    assert keys(recorded("resume_by_phrase")["response"]["candidates"][0]) <= keys(
        found["candidates"][0]
    )
    assert keys(recorded("advance_without_notes")["response"]["blockers"]["blockers"][0]) <= keys(
        blocked["blockers"]["blockers"][0]
    )
    upstream_entry = recorded("list_workflows_by_tag")["response"]["workflows"][0]
    assert keys(upstream_entry) - {"examples"} <= keys(tagged["workflows"][0])
    assert WALKED in {w["workflowId"] for w in tagged["workflows"]}
    assert all("planning" in w["tags"] for w in tagged["workflows"])
    assert tagged["workflows"][0]["workflowHash"] is None  # inspect_workflow gives it
    assert inspected["workflowHash"].startswith("sha256:")
    assert blocked["kind"] == "blocked" and reread["nextIntent"] == "rehydrate_only"
    assert started["continueToken"].startswith("ct_")
    assert checkpoint["resumeToken"].startswith("st_")
    for label, (failed, body) in errors.items():
        theirs = recorded(label)
        assert failed and theirs["isError"], label
        assert body["code"] == theirs["response"]["code"], (label, body)
        assert keys(theirs["response"]) <= keys(body), label


async def test_a_token_of_another_store_is_refused(shared_servers, empty_project, tmp_path):
    """Each store signs with its own key: a token from one home is forged in another. The one
    home is the module's kept server's (a store of its own; next to the other tests asking for
    it, so no start of its own), the other a process started here."""
    async with shared_servers.connected(*UPSTREAM_EDITION) as (one, _):
        made = await one.call_tool(
            "start_workflow", {"workflowId": WALKED, "workspacePath": str(tmp_path), "goal": "x"}
        )
        token = json.loads(made.content[0].text)["continueToken"]
    async with stdio(empty_project, tmp_path, "legacy", "--tools", "upstream") as two:
        refused = await two.call_tool("continue_workflow", {"continueToken": token})
    assert refused.is_error
    assert json.loads(refused.content[0].text)["code"] == "TOKEN_BAD_SIGNATURE"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_upstream_agent_walks_a_bundled_workflow_over_stdio(
    shared_servers, tmp_path, mode
):
    async with shared_servers.connected(*UPSTREAM_EDITION, mode=mode) as (client, _):
        done = await walk(client, tmp_path)
    assert done["steps"] == ["understand", "plan", "implement", "verify"]
    assert done["blocked_code"] == "MISSING_REQUIRED_NOTES"
    assert done["replay_other_notes"] == "refused"  # ours refuses a different answer (docs)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_upstream_agent_walks_it_over_http(shared_servers, tmp_path, mode):
    async with shared_servers.connected(*UPSTREAM_EDITION, transport="http", mode=mode) as (
        client,
        _,
    ):
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
        done = await walk(client, tmp_path)
    assert done["complete"] and done["resume_found"]


# Pairs of default-edition tools that do one job in two ways: each must name the other.
SIBLINGS = [
    ("workflow_list", "list_workflows"),
    ("workflow_get", "inspect_workflow"),
    ("run_workflow", "start_workflow"),
    ("workflow_next", "start_workflow"),
]


async def test_the_default_edition_has_the_session_tools_and_names_siblings(
    empty_project, tmp_path
):
    async with stdio(empty_project, tmp_path, "legacy") as client:
        described = {tool.name: tool.description for tool in (await client.list_tools()).tools}
    assert {"start_workflow", "inspect_workflow", "checkpoint_workflow", "resume_session"} <= set(
        described
    )
    for one, other in SIBLINGS:
        assert other in described[one] and one in described[other], (one, other)


async def test_an_unknown_edition_in_the_environment_is_a_usage_error(tmp_path):
    # async only because the module's tests share one event loop (pytestmark); nothing awaits
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "workrail_mcp"],
        env=server_env(tmp_path, WORKRAIL_TOOLS="v2"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "WORKRAIL_TOOLS: 'v2' is not an edition" in done.stderr


async def test_a_replay_after_a_restart_is_the_recorded_answer(empty_project, tmp_path):
    """The lost-reply case across processes: the same token and notes sent to a new server
    process get the very JSON the first one answered, and the session did not move twice."""
    ws = str(tmp_path)
    notes = {"notesMarkdown": "## Requirements\n## Affected files\n## Assumptions\n- none"}

    async def call(client: Client, tool: str, arguments: dict[str, Any]) -> str:
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content[0].text
        return result.content[0].text

    async with stdio(empty_project, tmp_path, "legacy", "--tools", "upstream") as first:
        started = json.loads(
            await call(
                first, "start_workflow", {"workflowId": WALKED, "workspacePath": ws, "goal": "x"}
            )
        )
        token = started["continueToken"]
        answered = await call(first, "continue_workflow", {"continueToken": token, "output": notes})
    async with stdio(empty_project, tmp_path, "2026-07-28", "--tools", "upstream") as second:
        replayed = await call(
            second, "continue_workflow", {"continueToken": token, "output": notes}
        )
        latest = json.loads(answered)["continueToken"]
        reread = json.loads(await call(second, "continue_workflow", {"continueToken": latest}))
    assert replayed == answered
    assert json.loads(answered)["pending"]["stepId"] == "plan"
    # still one step on, not two: the answer's token names the step pending now
    assert reread["pending"]["stepId"] == "plan" and "forkOf" not in reread
