"""fork_workflow over a real stdio server process, driven by the SDK's own client."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client

from tests.mcp.conftest import stdio_parameters, write_workflow
from tests.mcp.tool_results import error_of

pytestmark = pytest.mark.slow


def _ask_mark_ask(log: Path) -> dict:
    """A prompt step whose answer sets ``word``, a command that logs it with the parameter
    ``tag``, and a prompt step: what ran again is read from ``log``."""
    code = "import sys; open(sys.argv[1], 'a').write(' '.join(sys.argv[2:]) + '\\n')"
    return {
        "id": "ask-mark-ask",
        "name": "Ask, mark, ask",
        "description": "a prompt step, a command that logs, a prompt step",
        "version": "1.0.0",
        "parameters": {"type": "object", "properties": {"tag": {"type": "string"}}},
        "steps": [
            {"id": "ask", "title": "Ask", "prompt": "Choose a word"},
            {
                "id": "mark",
                "title": "Mark",
                "run": {
                    "command": [
                        sys.executable,
                        "-c",
                        code,
                        str(log),
                        "{{parameters.tag}}",
                        "{{context.word}}",
                    ]
                },
            },  # fmt: skip
            {"id": "again", "title": "Again", "prompt": "Say done"},
        ],
    }


async def test_fork_keeps_the_answer_and_runs_the_command_again_with_new_values(tmp_path):
    project = tmp_path / "project"
    log = tmp_path / "log"
    write_workflow(project / "workflows", _ask_mark_ask(log))
    async with Client(stdio_parameters(project, tmp_path, "--allow-commands")) as c:
        started = await c.call_tool(
            "run_workflow", {"workflow_name": "ask-mark-ask", "parameters": {"tag": "a"}}
        )
        run_id = started.structured_content["workflow_id"]
        answered = await c.call_tool(
            "continue_workflow",
            {"workflow_id": run_id, "output": "chosen", "context": {"word": "one"}},
        )
        assert answered.structured_content["waiting"]["step_key"] == "again"
        assert log.read_text() == "a one\n"

        forked = await c.call_tool(
            "fork_workflow",
            {"workflow_id": run_id, "from_step": "mark", "parameters": {"tag": "b"}},
        )
        fork = forked.structured_content
        # the answer to `ask` is kept (not asked again, its context too); `mark` runs again
        assert fork["status"] == "waiting" and fork["waiting"]["step_key"] == "again", fork
        assert fork["forked_from"] == {"run_id": run_id, "step": "mark"}
        assert [r["step_name"] for r in fork["step_results"]] == ["ask", "mark"]
        assert log.read_text() == "a one\nb one\n"
        # a fork of the fork: the answer it keeps is the first run's, its context too
        again = await c.call_tool(
            "fork_workflow",
            {"workflow_id": fork["workflow_id"], "from_step": "mark", "parameters": {"tag": "c"}},
        )
        assert again.structured_content["waiting"]["step_key"] == "again", again.structured_content
        assert log.read_text() == "a one\nb one\nc one\n"
        parent = await c.call_tool("get_workflow_run", {"workflow_id": run_id})
        assert parent.structured_content["forks"] == [
            {"run_id": fork["workflow_id"], "step": "mark"}
        ]

        unknown = error_of(
            await c.call_tool("fork_workflow", {"workflow_id": run_id, "from_step": "nope"})
        )
        assert unknown["code"] == -32602 and unknown["data"]["steps"] == ["ask", "mark", "again"]
        missing = error_of(
            await c.call_tool("fork_workflow", {"workflow_id": "wf-nope", "from_step": "mark"})
        )
        assert missing["code"] == -32008

    async with Client(
        stdio_parameters(project, tmp_path)
    ) as c:  # no --allow-commands: refused as run_workflow is
        refused = error_of(
            await c.call_tool("fork_workflow", {"workflow_id": run_id, "from_step": "mark"})
        )
        assert refused["code"] == -32007 and "--allow-commands" in refused["message"], refused
    assert log.read_text().count("\n") == 3
