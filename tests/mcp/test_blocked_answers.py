"""Blocked answers through the real stdio server, in both tool editions and for runs: each kind
of blocker has upstream WorkRail 3.x's code, keys and pointer, and carries the exact call that
retries the step — an agent that only copies that call gets through in one retry.

Upstream's codes, pointers and keys are those of its source (v3.121.0: reason-model.ts,
blocking-decision.ts, validation-criteria-validator.ts, output-schemas.ts); the notes blocker is
also in its recorded answers (tests/fixtures/upstream_sessions/advance_without_notes.json).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.blocked_flows import BLOCKED
from tests.mcp.conftest import write_workflow
from tests.mcp.scripted_peer import Person

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

UPSTREAM_BLOCKED_KEYS = {"blockers", "retryable", "retryContinueToken"}


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project of the module's kept servers (one per edition and callbacks offered, the
    tests asking for the same one next to each other); each test starts sessions of its own."""
    project = tmp_path_factory.mktemp("blocked") / "project"
    for flow, *_ in BLOCKED.values():
        write_workflow(project / "workflows", flow)
    return project


def _person() -> Person:
    """Rejects the confirmation once, then approves the same answer put to it again."""
    return Person({"decision": "reject", "comment": "not yet"}, {"decision": "approve"})


async def _call(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    # The upstream edition answers as upstream does: the JSON as one text block only.
    return result.structured_content or json.loads(result.content[0].text)


async def _copy_the_suggested_call(client: Any, blocker: dict[str, Any]) -> dict[str, Any]:
    """The scripted agent: it sends exactly the call the blocker suggests, nothing of its own."""
    call = blocker["retryCall"]
    return await _call(client, call["tool"], call["params"])


async def test_every_blocker_kind_of_a_run_answer_carries_the_retry_that_passes(shared_servers):
    async with shared_servers.connected(person=_person()) as (client, _):
        for kind, (flow, notes, artifacts, code, pointer) in BLOCKED.items():
            if kind == "notes":
                continue  # a run asks no notes: its answer is the step's output
            started = await _call(client, "run_workflow", {"workflow_name": flow["id"]})
            run_id, step_key = started["workflow_id"], started["waiting"]["step_key"]
            answer: dict[str, Any] = {"workflow_id": run_id, "step_key": step_key, "output": notes}
            if artifacts:
                answer["artifacts"] = artifacts
            blocked = await _call(client, "continue_workflow", answer)
            assert blocked["outcome"] == "blocked" and blocked["status"] == "waiting", kind
            (blocker,) = blocked["blockers"]["blockers"]
            assert (blocker["code"], blocker["pointer"]) == (code, pointer), kind
            params = blocker["retryCall"]["params"]
            assert (params["workflow_id"], params["step_key"]) == (run_id, step_key), kind
            after = await _copy_the_suggested_call(client, blocker)
            assert after["outcome"] == "accepted", (kind, after)
            assert after["waiting"]["step"]["id"] == "second", (kind, after)


@pytest.mark.parametrize("edition", [(), ("--tools", "upstream")], ids=["ours", "upstream"])
async def test_every_blocker_kind_in_a_session_is_upstreams_and_its_retry_passes(
    shared_servers, edition
):
    project = shared_servers.project
    async with shared_servers.connected(*edition, person=_person()) as (client, _):
        blocked_by_kind = {}
        for kind, (flow, notes, artifacts, _, _) in BLOCKED.items():
            started = await _call(
                client,
                "start_workflow",
                {"workflowId": flow["id"], "workspacePath": str(project), "goal": kind},
            )
            output: dict[str, Any] = {"notesMarkdown": notes}
            if artifacts:
                output["artifacts"] = artifacts
            blocked_by_kind[kind] = await _call(
                client,
                "continue_workflow",
                {"continueToken": started["continueToken"], "output": output},
            )
        # Upstream's codes, pointers and keys, one blocker per kind.
        assert {
            kind: [(b["code"], b["pointer"]) for b in blocked["blockers"]["blockers"]]
            for kind, blocked in blocked_by_kind.items()
        } == {kind: [(code, pointer)] for kind, (_, _, _, code, pointer) in BLOCKED.items()}
        for kind, blocked in blocked_by_kind.items():
            assert blocked["kind"] == "blocked", kind
            assert UPSTREAM_BLOCKED_KEYS <= set(blocked), kind
            (blocker,) = blocked["blockers"]["blockers"]
            assert blocker["message"] and blocker["suggestedFix"], kind
            has_validation = blocker["code"] == "INVALID_REQUIRED_OUTPUT"
            assert ("validation" in blocked) == has_validation, kind
            if has_validation:
                assert set(blocked["validation"]) == {"issues", "suggestions"}
                assert blocked["validation"]["issues"], kind
            assert ("assessmentFollowup" in blocked) == (kind == "followup"), kind
        followup = blocked_by_kind["followup"]["assessmentFollowup"]
        assert set(followup) == {"title", "guidance"}
        assert followup["guidance"] == "Add a rollback plan"
        # The scripted agent copies each blocker's suggested call, and gets through at once.
        for kind, blocked in blocked_by_kind.items():
            (blocker,) = blocked["blockers"]["blockers"]
            assert blocker["retryCall"]["params"]["continueToken"] == blocked["continueToken"]
            moved = await _copy_the_suggested_call(client, blocker)
            assert moved["kind"] == "ok" and moved["pending"]["stepId"] == "second", (kind, moved)


async def test_workflow_next_blocked_by_its_artifacts_carries_the_retry_that_passes(
    shared_servers,
):
    """The stateless next step checks only the artifacts (contract, assessments): each such kind
    is sent back with the workflow_next call that hands over artifacts that pass."""
    kinds = ["contract-missing", "contract-invalid", "assessment", "followup"]
    async with shared_servers.connected() as (client, _):
        for kind in kinds:
            flow, _, artifacts, code, pointer = BLOCKED[kind]
            asked = {"workflowId": flow["id"], "completedSteps": ["first"], "context": {}}
            found = await _call(client, "workflow_next", {**asked, "artifacts": artifacts})
            assert found["step"]["id"] == "first" and found["blocked"], kind
            (blocker,) = found["blocked"]["blockers"]
            assert (blocker["code"], blocker["pointer"]) == (code, pointer), kind
            assert blocker["retryCall"]["params"]["completedSteps"] == ["first"], kind
            moved = await _copy_the_suggested_call(client, blocker)
            assert "blocked" not in moved and moved["step"]["id"] == "second", (kind, moved)
