"""A scripted agent written against upstream WorkRail 3.x's session tools, and nothing else.

It knows only upstream's tool names and shapes (tests/fixtures/upstream_sessions/README.md):
``list_workflows`` → ``start_workflow`` → ``continue_workflow`` with notes until the session is
complete, trying on the way one advance without notes (it must be blocked), one replayed token
(it must return the recorded response), and a move to a "new chat": ``checkpoint_workflow``, then
``resume_session`` by a phrase from its notes, a re-read with the resume token (which must not be
able to advance), and the rest of the walk from there.

It was run first against upstream built from its source, then, unchanged, against
``workrail-mcp --tools upstream`` (tests/mcp/test_upstream_edition.py runs it in CI):

    python tests/mcp/upstream_agent.py --workflow wr.presentation-creation \\
        -- node /path/to/upstream/dist/mcp-server.js
    python tests/mcp/upstream_agent.py --workflow ai-task-implementation \\
        -- workrail-mcp --tools upstream

It prints its transcript as JSON and exits 0 when every check held, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any

# A phrase that appears only in the notes of the first answered step: resume_session must find
# the session by it (not by the goal).
RESUME_PHRASE = "heliotrope ledger"

# Notes a careful agent would write for the steps of the workflows it is used on; any other step
# gets GENERIC_NOTES. They satisfy the steps' validation criteria (the agent does not guess).
ANSWER_BOOK: dict[str, str] = {
    "understand": (
        "## Requirements\n1. Add a `--since` flag to the export command.\n"
        "## Affected files\n- `export/cli.py`: parses the flags.\n"
        "## Assumptions\n- Dates are ISO 8601.\n## Open questions\n- None."
    ),
    "plan": (
        "1. Parse `--since` in `export/cli.py`; test: `tests/test_cli.py::test_since`.\n"
        "2. Filter rows in `export/query.py`; test: `tests/test_query.py::test_since_filter`.\n"
        "3. Document the flag in `docs/export.md`.\n"
        "Risks: none public. Not doing: time zones.\n"
        "Verification: `pytest -q`, `ruff check .`, `mypy`."
    ),
    "implement": (
        "Files changed: `export/cli.py` (new flag), `export/query.py` (filter), "
        "`tests/test_cli.py`, `tests/test_query.py`."
    ),
    "verify": "Ran `pytest -q`: 48 passed. Ran `ruff check .`: clean. Regression risk: low.",
}
GENERIC_NOTES = (
    "## What I did\n- Worked through the step as asked and wrote down the decisions.\n"
    "## What I produced\n- Notes for the record; nothing left open."
)
ONBOARDING_NOTES = "Read the instructions; ready for the first step."


class AgentCheckFailed(AssertionError):
    pass


@dataclass
class Transcript:
    workflow_id: str
    steps: list[str] = field(default_factory=list)  # pending step ids, in the order answered
    calls: int = 0
    blocked_code: str | None = None
    replay_identical: bool | None = None
    # "recorded" (upstream: the recorded response) or "refused" (with the session's state now)
    replay_other_notes: str | None = None
    resume_found: bool | None = None
    resume_reread_step: str | None = None
    resume_recovery_has_notes: bool | None = None
    resume_advance_error: str | None = None
    tampered_error: str | None = None
    complete: bool = False


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise AgentCheckFailed(message)


class UpstreamAgent:
    """Speaks to any MCP client session that has ``call_tool`` (the SDK's `Client`)."""

    def __init__(self, client: Any, workspace: str, goal: str) -> None:
        self.client, self.workspace, self.goal = client, workspace, goal

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """(isError, the JSON of the text block) — how upstream answers every tool."""
        self.transcript.calls += 1
        result = await self.client.call_tool(tool, arguments)
        text = result.content[0].text
        return bool(result.is_error), json.loads(text)

    async def ok(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        failed, body = await self.call(tool, arguments)
        _check(not failed, f"{tool} failed: {json.dumps(body)[:500]}")
        return body

    async def find_workflow(self, workflow_id: str) -> None:
        listed = await self.ok("list_workflows", {"workspacePath": self.workspace})
        if workflow_id in {w["workflowId"] for w in listed["workflows"]}:
            return
        # Upstream answers an untagged list with tags to choose from: look through them.
        tags = [tag["id"] for tag in listed.get("tagSummary", [])]
        _check(bool(tags), f"{workflow_id} not listed and no tags offered")
        tagged = await self.ok("list_workflows", {"workspacePath": self.workspace, "tags": tags})
        found = {w["workflowId"] for w in tagged["workflows"]}
        _check(workflow_id in found, f"{workflow_id} is not among the listed workflows")

    def notes_for(self, pending: dict[str, Any], first: bool) -> str:
        if pending["stepId"] == "wr-system-onboarding":
            return ONBOARDING_NOTES
        notes = ANSWER_BOOK.get(pending["stepId"], GENERIC_NOTES)
        return notes + (f"\n\nNoted for later: the {RESUME_PHRASE} is reconciled." if first else "")

    async def advance(self, token: str, notes: str) -> dict[str, Any]:
        return await self.ok(
            "continue_workflow",
            {
                "continueToken": token,
                "intent": "advance",
                "output": {"notesMarkdown": notes},
                "workspacePath": self.workspace,
            },
        )

    async def try_blocked(self, state: dict[str, Any]) -> dict[str, Any]:
        """An advance without notes: blocked (then retry with its token) or, for a step whose
        notes are optional, simply applied."""
        token = state["continueToken"]
        response = await self.ok(
            "continue_workflow",
            {
                "continueToken": token,
                "intent": "advance",
                "output": {"artifacts": []},
                "workspacePath": self.workspace,
            },
        )
        if response.get("kind") != "blocked":
            return response
        blockers = response["blockers"]["blockers"]
        _check(bool(blockers) and "code" in blockers[0], f"blocked without blockers: {response}")
        _check(
            response["pending"]["stepId"] == state["pending"]["stepId"],
            "a blocked advance moved the session",
        )
        self.transcript.blocked_code = blockers[0]["code"]
        return {**response, "continueToken": response["retryContinueToken"]}

    async def replay(self, token: str, notes: str, first: dict[str, Any]) -> None:
        """The same token twice (a lost reply): never applied twice. Sent once more with other
        notes, upstream answers with the recorded response; a server may instead refuse it, as
        long as it says where the session is now (it must not apply it)."""
        again = await self.advance(token, notes)
        self.transcript.replay_identical = again == first
        failed, other = await self.call(
            "continue_workflow",
            {
                "continueToken": token,
                "intent": "advance",
                "output": {"notesMarkdown": notes + "\n\n(sent again with other words)"},
                "workspacePath": self.workspace,
            },
        )
        if not failed:
            same = other["continueToken"] == first["continueToken"]
            self.transcript.replay_other_notes = "recorded" if same else "applied again"
            return
        state = (other.get("details") or {}).get("state") or {}
        now = state.get("continueToken") == first["continueToken"]
        self.transcript.replay_other_notes = "refused" if now else f"refused: {other}"

    async def move_to_new_chat(self, state: dict[str, Any]) -> dict[str, Any]:
        """Checkpoint, then find the session again by a phrase of its notes and re-read it."""
        checkpoint = await self.ok(
            "checkpoint_workflow", {"checkpointToken": state["checkpointToken"]}
        )
        _check(checkpoint["resumeToken"].startswith("st"), f"no resume token: {checkpoint}")
        found = await self.ok(
            "resume_session", {"workspacePath": self.workspace, "query": RESUME_PHRASE}
        )
        mine = [c for c in found["candidates"] if c["sessionTitle"] == self.goal]
        self.transcript.resume_found = bool(mine) and found["candidates"][0] is mine[0]
        _check(bool(mine), f"resume_session did not find the session: {found}")
        resume_token = mine[0]["resumeToken"]
        failed, refused = await self.call(
            "continue_workflow",
            {
                "continueToken": resume_token,
                "intent": "advance",
                "output": {"notesMarkdown": "should not apply"},
                "workspacePath": self.workspace,
            },
        )
        self.transcript.resume_advance_error = refused.get("code") if failed else None
        reread = await self.ok(
            "continue_workflow",
            {"continueToken": resume_token, "intent": "rehydrate", "workspacePath": self.workspace},
        )
        self.transcript.resume_reread_step = reread["pending"]["stepId"]
        self.transcript.resume_recovery_has_notes = RESUME_PHRASE in reread["pending"]["prompt"]
        return reread

    async def tamper(self, token: str) -> None:
        forged = token[:-1] + ("A" if token[-1] != "A" else "B")
        failed, body = await self.call(
            "continue_workflow",
            {
                "continueToken": forged,
                "output": {"notesMarkdown": "forged"},
                "workspacePath": self.workspace,
            },
        )
        self.transcript.tampered_error = body.get("code") if failed else None

    async def walk(self, workflow_id: str, max_steps: int = 60) -> Transcript:
        self.transcript = Transcript(workflow_id)
        await self.find_workflow(workflow_id)
        state = await self.ok(
            "start_workflow",
            {"workflowId": workflow_id, "workspacePath": self.workspace, "goal": self.goal},
        )
        answered = 0
        while not state["isComplete"]:
            _check(answered < max_steps, f"still not complete after {max_steps} steps")
            if self.transcript.blocked_code is None:
                state = await self.try_blocked(state)
                if state.get("kind") != "blocked":
                    answered += 1
                    self.transcript.steps.append("(no notes)")
                    continue
            pending = state["pending"]
            real_step = pending["stepId"] != "wr-system-onboarding"
            first = real_step and self.transcript.replay_identical is None
            notes = self.notes_for(pending, first)
            token = state["continueToken"]
            advanced = await self.advance(token, notes)
            _check(advanced.get("kind") == "ok", f"advance not applied: {json.dumps(advanced)}")
            self.transcript.steps.append(pending["stepId"])
            answered += 1
            if first:
                await self.replay(token, notes, advanced)
                await self.tamper(advanced.get("continueToken") or token)
            elif self.transcript.resume_found is None and not advanced["isComplete"]:
                advanced = await self.move_to_new_chat(advanced)
            state = advanced
        self.transcript.complete = True
        _check(state.get("nextIntent") == "complete", f"complete without nextIntent: {state}")
        return self.transcript


def verdict(transcript: Transcript) -> list[str]:
    """What went wrong, if anything (an empty list when every check held)."""
    expected = {
        "blocked_code": lambda v: bool(v),
        "replay_identical": lambda v: v is True,
        "replay_other_notes": lambda v: v in ("recorded", "refused"),
        "resume_found": lambda v: v is True,
        "resume_recovery_has_notes": lambda v: v is True,
        "resume_advance_error": lambda v: v == "TOKEN_SCOPE_MISMATCH",
        "tampered_error": lambda v: v == "TOKEN_BAD_SIGNATURE",
        "complete": lambda v: v is True,
    }
    values = asdict(transcript)
    return [f"{name}: {values[name]!r}" for name, ok in expected.items() if not ok(values[name])]


async def run(command: list[str], workflow_id: str, env: dict[str, str]) -> Transcript:
    from mcp import Client, StdioServerParameters

    workspace = tempfile.mkdtemp(prefix="upstream-agent-")
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=workspace)
    async with Client(params) as client:
        agent = UpstreamAgent(client, workspace, f"walk {workflow_id} for the record")
        return await agent.walk(workflow_id)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workflow", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        transcript = asyncio.run(run(command, args.workflow, dict(os.environ)))
    except BaseExceptionGroup as group:  # the SDK's task group wraps what the agent raised
        failed, rest = group.split(AgentCheckFailed)
        if failed is None:
            raise
        print(json.dumps({"failed": [str(f) for f in failed.exceptions]}))
        return 1
    problems = verdict(transcript)
    print(json.dumps({**asdict(transcript), "problems": problems}, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
