"""An agent that does exactly what workflow_next's description says gets real prompts.

The SDK's own client over a real stdio server (one kept for the module: workflow_next keeps no
state), on the bundled workflows."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

ANALYSIS = "The flag parser lives in cli.py; two call sites change."


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project without workflows of its own: only the bundled ones are served."""
    root = tmp_path_factory.mktemp("description") / "project"
    root.mkdir()
    return root


async def test_a_step_output_reaches_the_next_prompt_as_the_description_says(shared_servers):
    async with shared_servers.connected(mode="auto") as (c, _):
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


async def test_a_command_step_shows_its_argv_with_the_parameter_defaults(shared_servers):
    async with shared_servers.connected(mode="auto") as (c, _):
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
