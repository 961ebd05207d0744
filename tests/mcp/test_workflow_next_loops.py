"""An agent that knows only what workflow_next's descriptions say completes a forEach loop.

The agent below does exactly what the tool and its schemas tell it: append each finished step's
id to completedSteps, pass back the returned context, and set the variables a step asks for.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
from mcp import Client

from workrail_engine.catalog import Catalog, Source, bundled_directory
from workrail_mcp import create_server

FILES = ["api.py", "service.py", "test_service.py"]
# What mr-review's first step asks the agent to put in the context.
GATHERED = {"reviewFiles": FILES, "linesChanged": 120, "riskLevel": "low", "targetBranch": "main"}


@pytest.fixture(params=["legacy", "2026-07-28"])
def client(request) -> Client:
    catalog = Catalog([Source("bundled", bundled_directory())])
    return Client(create_server(catalog), mode=request.param)


def _next_tool(tools) -> object:
    return next(tool for tool in tools if tool.name == "workflow_next")


def test_the_descriptions_tell_the_agent_what_to_carry():
    """What the agent loop below relies on is said in the tool's own words and schemas."""
    import anyio

    async def describe():
        catalog = Catalog([Source("bundled", bundled_directory())])
        async with Client(create_server(catalog)) as session:
            return _next_tool((await session.list_tools()).tools)

    tool = anyio.run(describe)
    output = tool.output_schema
    assert {"step", "guidance", "isComplete", "context", "skipped"} <= set(output["required"])
    assert {"loop", "notes"} <= set(output["properties"])
    assert "pass back" in output["properties"]["context"]["description"]
    completed = tool.input_schema["properties"]["completedSteps"]["description"]
    assert "any order" not in completed
    assert "Append" in completed and "once per iteration" in completed
    assert "returned context" in tool.description
    assert (
        "context returned by your previous"
        in tool.input_schema["properties"]["context"]["description"]
    )


async def test_an_agent_following_the_descriptions_completes_a_foreach_loop(client):
    async with client:
        schema = _next_tool((await client.list_tools()).tools).output_schema
        completed: list[str] = []
        context: dict = {}
        done: list[tuple[str, object]] = []
        for _ in range(20):
            result = await client.call_tool(
                "workflow_next",
                {"workflowId": "mr-review", "completedSteps": completed, "context": context},
            )
            assert not result.is_error, result.content[0].text
            answer = result.structured_content
            assert json.loads(result.content[0].text) == answer
            jsonschema.validate(answer, schema)  # the declared shape is the real one
            if answer["isComplete"]:
                break
            step_id = answer["step"]["id"]
            done.append((step_id, answer.get("loop", {}).get("item")))
            completed.append(step_id)  # append, as completedSteps' description says
            context = dict(answer["context"])  # pass back the returned context…
            if step_id == "gather-context":
                context.update(GATHERED)  # …plus the variables the step asked to set
        else:
            pytest.fail(f"the workflow never completed: {done}")
    assert done == [
        ("gather-context", None),
        *[("review-file", name) for name in FILES],
        ("write-review", None),
    ]
    assert completed.count("review-file") == len(FILES)
