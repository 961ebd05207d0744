"""An agent that does exactly what workflow_next's description says gets real prompts.

The SDK's own client over a real stdio server, on the bundled workflows."""

from __future__ import annotations

import sys

import pytest
from mcp import Client, StdioServerParameters

from tests.mcp.conftest import server_env

pytestmark = pytest.mark.slow

ANALYSIS = "The flag parser lives in cli.py; two call sites change."


def client(tmp_path) -> Client:
    (tmp_path / "project").mkdir()
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-m", "workrail_mcp", "--project", str(tmp_path / "project")],
            env=server_env(tmp_path),
            cwd=str(tmp_path),
        )
    )


async def test_a_step_output_reaches_the_next_prompt_as_the_description_says(tmp_path):
    async with client(tmp_path) as c:
        tools = {tool.name: tool for tool in (await c.list_tools()).tools}
        description = tools["workflow_next"].description or ""
        assert "steps.ID.output" in description and '{"steps": {"analyze-task"' in description

        first = await c.call_tool(
            "workflow_next", {"workflowId": "coding-task", "completedSteps": []}
        )
        found = first.structured_content
        assert found["step"]["id"] == "analyze-task"
        assert found["nextAction"]["outputTo"] == ["steps.analyze-task.output"]
        assert "steps.analyze-task.output" in found["guidance"]["prompt"]

        # What the description says: the returned context, plus the step's output under steps.
        context = {**found["context"], "steps": {"analyze-task": {"output": ANALYSIS}}}
        second = await c.call_tool(
            "workflow_next",
            {"workflowId": "coding-task", "completedSteps": ["analyze-task"], "context": context},
        )
        prompt = second.structured_content["guidance"]["prompt"]
        assert second.structured_content["step"]["id"] == "design-approach"
        assert ANALYSIS in prompt and "[unset:" not in prompt, prompt


async def test_a_command_step_shows_its_argv_with_the_parameter_defaults(tmp_path):
    async with client(tmp_path) as c:
        default = await c.call_tool(
            "workflow_next", {"workflowId": "python-quality-gate", "completedSteps": []}
        )
        prompt = default.structured_content["guidance"]["prompt"]
        assert '["python", "-m", "ruff", "check", "."]' in prompt, prompt
        assert "{{parameters." not in prompt
        assert default.structured_content["context"]["parameters"]["path"] == "."

        chosen = await c.call_tool(
            "workflow_next",
            {
                "workflowId": "python-quality-gate",
                "completedSteps": [],
                "context": {"parameters": {"path": "src"}},
            },
        )
        prompt = chosen.structured_content["guidance"]["prompt"]
        assert '["python", "-m", "ruff", "check", "src"]' in prompt, prompt
