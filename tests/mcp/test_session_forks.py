"""Forking a session through the real server process over stdio (the SDK's client), in both tool
editions: an earlier step's continue token, or a checkpoint's resume token, re-read shows that
step with a fork token; advancing it branches the session into a new one, which becomes the one
resumed, while the old one stays as it was. The dashboard's and `workrail run-status`'s pages of
both show the lineage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client

from tests.mcp.conftest import stdio_parameters, write_workflow
from tests.mcp.dashboard.conftest import cli, env_for, served, workrail
from tests.mcp.test_session_parity import EDITIONS, answer, call

pytestmark = pytest.mark.slow

# The review step reads the draft's notes: a fork's later prompts must read the fork's answers.
FORKED_FLOW = {
    "id": "forked-flow",
    "name": "Forked flow",
    "description": "Draft, review, ship",
    "version": "1.0.0",
    "steps": [
        {"id": "draft", "title": "Draft", "prompt": "Draft the change"},
        {"id": "review", "title": "Review", "prompt": "Review this draft: {{steps.draft.output}}"},
        {"id": "ship", "title": "Ship", "prompt": "Ship it"},
    ],
}


@pytest.fixture
def forked_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    write_workflow(project / "workflows", FORKED_FLOW)
    return project


def connect(project: Path, tmp_path: Path, *edition: str) -> Client:
    """The real stdio server, its run store under ``tmp_path / "home"``."""
    return Client(stdio_parameters(project, tmp_path, *edition))


async def reread(client: Client, token: str, **more: Any) -> dict[str, Any]:
    return await call(
        client, "continue_workflow", {"continueToken": token, "intent": "rehydrate", **more}
    )


async def refused_reason(client: Client, token: str, notes: str) -> str:
    result = await client.call_tool(
        "continue_workflow", {"continueToken": token, "output": {"notesMarkdown": notes}}
    )
    assert result.is_error
    reason: str = json.loads(result.content[0].text)["error"]["data"]["reason"]
    return reason


async def walk_to_ship(client: Client, workspace: Path) -> list[dict[str, Any]]:
    """A session answered through draft and review: the response of each step, in order."""
    started = await call(
        client,
        "start_workflow",
        {"workflowId": "forked-flow", "workspacePath": str(workspace), "goal": "ship the cache"},
    )
    review = await answer(client, started["continueToken"], notesMarkdown="first draft")
    ship = await answer(client, review["continueToken"], notesMarkdown="reviewed the first")
    return [started, review, ship]


@pytest.mark.parametrize("edition", EDITIONS)
async def test_an_earlier_steps_token_branches_the_session_there(forked_project, tmp_path, edition):
    workspace = forked_project
    async with connect(forked_project, tmp_path, *edition) as client:
        started, review, ship = await walk_to_ship(client, workspace)
        session = started["runId"]
        assert ship["pending"]["stepId"] == "ship"
        resume = await call(
            client, "checkpoint_workflow", {"checkpointToken": review["checkpointToken"]}
        )

        # the draft's token re-read: the draft step again, with a token that branches
        earlier = await reread(client, started["continueToken"])
        assert earlier["pending"]["stepId"] == "draft"
        assert earlier["forkOf"]["runId"] == session and earlier["forkOf"]["stepId"] == "draft"
        assert earlier["forkOf"]["sessionPendingStepId"] == "ship"
        fork_token = earlier["continueToken"]
        assert fork_token.startswith("ct_") and fork_token != started["continueToken"]
        assert fork_token != (await reread(client, started["continueToken"]))["continueToken"]

        branch = await answer(client, fork_token, notesMarkdown="second draft")
        assert branch["runId"] != session
        assert branch["forkedFrom"] == {"runId": session, "stepId": "draft", "stepAttempt": 1}
        assert branch["pending"]["stepId"] == "review"
        assert "second draft" in branch["pending"]["prompt"]
        assert "first draft" not in branch["pending"]["prompt"]

        # exactly once: the fork token and answer again are the same branch; another answer
        # with it is refused; the draft's own token and answer again replay the first answer
        again = await answer(client, fork_token, notesMarkdown="second draft")
        assert again["runId"] == branch["runId"] and again["pending"] == branch["pending"]
        assert again["continueToken"] == branch["continueToken"]
        assert await refused_reason(client, fork_token, "third draft") == "ANSWER_NOT_APPLIED"
        replayed = await answer(client, started["continueToken"], notesMarkdown="first draft")
        assert replayed["runId"] == session and replayed["pending"]["stepId"] == "review"

        # the old branch is as it was, and readable
        old = await reread(client, ship["continueToken"])
        assert old["runId"] == session and old["pending"]["stepId"] == "ship"
        assert "first draft" in old["pending"]["prompt"] and "forkOf" not in old

        # a checkpoint's resume token of the review step (passed since): branches at review
        at_review = await reread(client, resume["resumeToken"], workspacePath=str(workspace))
        assert at_review["pending"]["stepId"] == "review"
        assert "first draft" in at_review["pending"]["prompt"]
        assert at_review["forkOf"]["stepId"] == "review"
        from_resume = await answer(client, at_review["continueToken"], notesMarkdown="approved")
        assert from_resume["forkedFrom"] == {"runId": session, "stepId": "review", "stepAttempt": 2}
        assert from_resume["pending"]["stepId"] == "ship"

        # a fork of the fork, at its review step: it keeps the fork's draft, not the first
        shipped = await answer(client, branch["continueToken"], notesMarkdown="reviewed second")
        assert shipped["pending"]["stepId"] == "ship"
        fork_review = await reread(client, branch["continueToken"])
        assert fork_review["forkOf"]["runId"] == branch["runId"]
        assert "second draft" in fork_review["pending"]["prompt"]
        grandchild = await answer(
            client, fork_review["continueToken"], notesMarkdown="reviewed it again"
        )
        assert grandchild["forkedFrom"] == {
            "runId": branch["runId"],
            "stepId": "review",
            "stepAttempt": 2,
        }
        story = await reread(client, grandchild["continueToken"])
        assert "second draft" in story["pending"]["prompt"]  # the recovery section
        assert "first draft" not in story["pending"]["prompt"]

        # the newest branch is the session resumed
        found = await call(
            client, "resume_session", {"workspacePath": str(workspace), "query": "draft"}
        )
        first = found["candidates"][0]
        assert first["runId"] == grandchild["runId"]
        assert first["forkedFrom"]["runId"] == branch["runId"]
        assert {c["runId"] for c in found["candidates"]} >= {session, branch["runId"]}


async def test_the_session_pages_show_where_it_was_forked_from_and_its_forks(
    forked_project, tmp_path
):
    async with connect(forked_project, tmp_path) as client:
        started, _, _ = await walk_to_ship(client, forked_project)
        earlier = await reread(client, started["continueToken"])
        branch = await answer(client, earlier["continueToken"], notesMarkdown="second draft")
        session, fork = started["runId"], branch["runId"]
        status = await call(client, "get_workflow_run", {"workflow_id": session})
    assert status["session"]["forks"][0]["run_id"] == fork
    assert status["session"]["forked_from"] is None

    home = tmp_path / "home"

    assert f"forked from {session} at step 'draft' (attempt 1)" in cli(
        forked_project, home, "run-status", fork
    )
    assert f"forked from {session} at step 'draft'" in cli(
        forked_project, home, "runs", "--search", "second draft"
    )

    with (
        served(
            workrail("dashboard", "--port", "0"),
            forked_project,
            env_for(home),
            r"listening on (http://\S+/)",
        ) as url,
        httpx2.Client(base_url=url) as browser,
    ):
        parent_page = browser.get(f"/runs/{session}")
        fork_page = browser.get(f"/runs/{fork}")
    assert parent_page.status_code == 200 and fork_page.status_code == 200
    assert f'<ul id="forks"><li><a href="/runs/{fork}">{fork}</a> from step' in parent_page.text
    assert (
        f'<dd id="forked-from"><a href="/runs/{session}">{session}</a> at step <code>draft</code>'
        in fork_page.text
    )
