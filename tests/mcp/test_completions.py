"""`completion/complete` over the real stdio process, in both protocol eras (the SDK's client)."""

from __future__ import annotations

import json

import pytest

from tests.mcp.conftest import TEST_FLOW, write_workflow

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

WORKFLOW = {"type": "ref/resource", "uri": "workrail://workflows/{id}"}
STEP = {"type": "ref/resource", "uri": "workrail://workflows/{id}/steps/{step}"}

PARAMETERS_FLOW = {
    **TEST_FLOW,
    "id": "release-flow",
    "name": "Release",
    "parameters": {
        "type": "object",
        "properties": {
            "channel": {"type": "string", "enum": ["stable", "beta", "nightly"]},
            "dryRun": {"type": "boolean", "description": "Only say what would be released."},
            "notes": {"type": "string"},
        },
    },
}


@pytest.fixture(scope="module")
def shared_project(shared_project):
    """The module's kept server (one per client era; nothing here changes what it serves)
    serves the release flow too."""
    write_workflow(shared_project / "workflows", PARAMETERS_FLOW)
    return shared_project


async def test_the_step_template_reads_a_step_and_prompts_take_parameters(shared_servers):
    async with shared_servers.connected() as (client, _):
        templates = (await client.list_resource_templates()).resource_templates
        assert "workrail://workflows/{id}/steps/{step}" in {t.uri_template for t in templates}
        read = await client.read_resource("workrail://workflows/test-flow/steps/implement")
        assert json.loads(read.contents[0].text)["title"] == "Implement"
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert [a.name for a in prompts["release-flow"].arguments] == [
            "task",
            "channel",
            "dryRun",
            "notes",
        ]
        started = await client.get_prompt("release-flow", {"task": "ship", "channel": "beta"})
        assert '"channel": "beta"' in started.messages[0].content.text


async def test_the_capability_is_declared(shared_servers):
    async with shared_servers.connected() as (client, _):
        assert client.server_capabilities.completions is not None


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_workflow_ids_step_ids_and_parameter_values(shared_servers, mode):
    async with shared_servers.connected(mode=mode) as (client, _):
        ids = await client.complete(WORKFLOW, {"name": "id", "value": "te"})
        assert ids.completion.values == ["test-flow"]
        every = await client.complete(WORKFLOW, {"name": "id", "value": ""})
        # The bundled workflows are served too; all are offered, sorted.
        assert {"ai-task-implementation", "release-flow", "test-flow"} <= set(
            every.completion.values
        )
        assert every.completion.values == sorted(every.completion.values)
        steps = await client.complete(
            STEP, {"name": "step", "value": ""}, context_arguments={"id": "test-flow"}
        )
        assert steps.completion.values == ["deep-dive", "implement", "understand"]
        typed = await client.complete(
            STEP, {"name": "step", "value": "IM"}, context_arguments={"id": "test-flow"}
        )
        assert typed.completion.values == ["implement"]
        channel = {"type": "ref/prompt", "name": "release-flow"}
        values = await client.complete(channel, {"name": "channel", "value": ""})
        assert values.completion.values == ["beta", "nightly", "stable"]
        flag = await client.complete(channel, {"name": "dryRun", "value": "t"})
        assert flag.completion.values == ["true"]
        # Free text, unknown prompts and templates: nothing offered, and no error either.
        for ref, argument in [
            (channel, "task"),
            (channel, "notes"),
            ({"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1"),
            ({"type": "ref/resource", "uri": "file:///{path}"}, "path"),
        ]:
            nothing = await client.complete(ref, {"name": argument, "value": ""})
            assert nothing.completion.values == [], (ref, argument)
        # A step id offered for a workflow that does not exist: nothing.
        missing = await client.complete(
            STEP, {"name": "step", "value": ""}, context_arguments={"id": "no-such-flow"}
        )
        assert missing.completion.values == []
