"""Sessions on upstream WorkRail 3.x's rails (issue 33), through the real server process over
stdio, in both tool editions: which steps ask for notes and say so, what a later step reads of an
earlier one's answer, what a re-read shows, how workflows are found by tag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import write_workflow

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

EDITIONS = [pytest.param((), id="default"), pytest.param(("--tools", "upstream"), id="upstream")]
LOOP_STOP = {"kind": "wr.loop_control", "decision": "stop"}

CONTRACT_FLOW = {
    "id": "contract-flow",
    "name": "Contract flow",
    "description": "A contract step between two prompt steps",
    "version": "1.0.0",
    "steps": [
        {"id": "understand", "title": "Understand", "prompt": "Read the task for {{goal}}"},
        {
            "id": "decide",
            "title": "Decide",
            "prompt": "Decide whether to go on",
            "outputContract": {"contractRef": "wr.contracts.loop_control"},
        },
        {
            "id": "build",
            "title": "Build",
            "prompt": "Based on {{steps.understand.output}}, build; "
            "the decision was {{steps.decide.output.decision}}.",
        },
        {"id": "wrap", "title": "Wrap up", "prompt": "Tidy up", "notesOptional": True},
    ],
}


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kept servers' project (`shared_servers`): the bundled workflows and ours."""
    root = tmp_path_factory.mktemp("parity") / "project"
    write_workflow(root / "workflows", CONTRACT_FLOW)
    return root


async def call(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    body = json.loads(result.content[0].text)
    assert not result.is_error, body
    return body


async def start(client: Any, workflow: str, workspace: Path) -> dict[str, Any]:
    return await call(
        client,
        "start_workflow",
        {"workflowId": workflow, "workspacePath": str(workspace), "goal": "ship the cache"},
    )


async def answer(client: Any, token: str, **output: Any) -> dict[str, Any]:
    return await call(client, "continue_workflow", {"continueToken": token, "output": output})


def codes(body: dict[str, Any]) -> list[str]:
    return [b["code"] for b in body.get("blockers", {}).get("blockers", [])]


@pytest.mark.parametrize("edition", EDITIONS)
async def test_a_contract_step_answered_by_its_artifact_alone_advances(
    shared_servers, tmp_path, edition
):
    """Upstream asks no notes of a step with an output contract: its artifact is the evidence.
    Without the artifact it is still blocked, for the artifact and not for notes."""
    async with shared_servers.connected(*edition) as (client, _):
        started = await start(client, "contract-flow", tmp_path)
        decide = await answer(client, started["continueToken"], notesMarkdown="read it")
        assert decide["pending"]["stepId"] == "decide"
        empty = await answer(client, decide["continueToken"], artifacts=[])
        moved = await answer(client, decide["continueToken"], artifacts=[LOOP_STOP])
    assert empty["kind"] == "blocked" and codes(empty) == ["MISSING_REQUIRED_OUTPUT"]
    assert moved["kind"] == "ok" and moved["pending"]["stepId"] == "build"
