"""Every tool through the SDK's in-memory Client: success and each error, both protocol eras."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client, MCPError

from tests.mcp.conftest import TEST_FLOW
from tests.mcp.tool_results import error_of
from workrail_engine.definition.ids import WORKFLOW_ID_PATTERN
from workrail_mcp import create_server


@pytest.fixture(params=["legacy", "2026-07-28"])
def connect(request, catalog):
    """Opens a session in the test's own task (an async fixture would close it in another)."""
    return lambda: Client(create_server(catalog), mode=request.param)


def ok(result) -> dict:
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def test_tools_are_described_for_a_model(connect):
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        ours = {
            "workflow_list",
            "workflow_get",
            "workflow_next",
            "workflow_validate",
            "list_workflows",
            "create_workflow",
            "workflow_schema",
            "workflow_lint",
        }
        assert set(tools) >= ours  # the run tools: tests/mcp/test_tool_surface.py
        for tool in (tools[name] for name in ours):
            assert len(tool.description) > 80, tool.name
            assert tool.input_schema["additionalProperties"] is False
            assert tool.output_schema["type"] == "object"
            assert tool.annotations.read_only_hint is (tool.name != "create_workflow")
        workflow_id = tools["workflow_get"].input_schema["properties"]["id"]
        assert (workflow_id["pattern"], workflow_id["minLength"], workflow_id["maxLength"]) == (
            WORKFLOW_ID_PATTERN,
            3,
            64,
        )
        assert tools["create_workflow"].annotations.destructive_hint is True


async def test_workflow_list(connect):
    async with connect() as client:
        listed = ok(await client.call_tool("workflow_list", {}))["workflows"]
        assert [w["id"] for w in listed] == ["ai-task-implementation", "test-flow"]
        assert listed[1] == {
            "id": "test-flow",
            "name": "Test Flow",
            "description": "A small workflow for the MCP tests",
            "category": "testing",
            "version": "1.0.0",
            "source": "project",
        }


async def test_workflow_get_and_unknown_id(connect):
    async with connect() as client:
        assert (
            ok(await client.call_tool("workflow_get", {"id": "test-flow"}))["steps"][0]["id"]
            == "understand"
        )
        error = error_of(await client.call_tool("workflow_get", {"id": "test-flwo"}))
        assert error["code"] == -32001
        assert error["data"] == {"workflowId": "test-flwo", "closest": ["test-flow"]}


@pytest.mark.parametrize(
    "arguments, details",
    [
        pytest.param({}, "id is required", id="missing"),
        pytest.param(
            {"id": "Bad_Id"}, f"id must match the pattern {WORKFLOW_ID_PATTERN}", id="pattern"
        ),
        pytest.param({"id": "ab"}, "id must have at least 3 characters", id="short"),
        pytest.param({"id": 3}, "id must be a string (got a number)", id="type"),
        pytest.param(
            {"id": "test-flow", "mode": "preview"},
            "unexpected argument 'mode'; accepted: id",
            id="unknown",
        ),
    ],
)
async def test_bad_arguments_are_invalid_params(connect, arguments, details):
    async with connect() as client:
        error = error_of(await client.call_tool("workflow_get", arguments))
        assert error["code"] == -32602 and error["message"] == "Invalid params"
        assert error["data"]["details"].startswith(details)


async def test_unknown_tool_is_a_protocol_error(connect):
    async with connect() as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("workflow_lsit", {})
        assert raised.value.error.code == -32602
        assert "workflow_list" in raised.value.error.data["closest"]


async def test_workflow_next_walks_the_steps(connect):
    async with connect() as client:
        first = ok(
            await client.call_tool(
                "workflow_next", {"workflowId": "test-flow", "completedSteps": []}
            )
        )
        assert first["step"]["id"] == "understand" and first["isComplete"] is False
        assert first["guidance"]["requiresConfirmation"] is True
        # The engine gives what to report as data; the MCP front end phrases it as the next call.
        assert first["nextAction"] == {"complete": "understand", "passContext": True}
        assert first["guidance"]["prompt"].endswith(
            'When this step is done, append "understand" to completedSteps and call '
            "workflow_next again with the context returned here."
        )
        # deep-dive only runs for large tasks
        small = ok(
            await client.call_tool(
                "workflow_next", {"workflowId": "test-flow", "completedSteps": ["understand"]}
            )
        )
        assert small["step"]["id"] == "implement"
        large = ok(
            await client.call_tool(
                "workflow_next",
                {
                    "workflowId": "test-flow",
                    "completedSteps": ["understand"],
                    "context": {"taskScope": "large"},
                },
            )
        )
        assert large["step"]["id"] == "deep-dive"
        done = ok(
            await client.call_tool(
                "workflow_next",
                {"workflowId": "test-flow", "completedSteps": ["understand", "implement"]},
            )
        )
        assert done["isComplete"] is True and done["step"] is None


async def test_workflow_next_errors(connect):
    async with connect() as client:
        assert (
            error_of(
                await client.call_tool(
                    "workflow_next", {"workflowId": "nope-flow", "completedSteps": []}
                )
            )["code"]
            == -32001
        )
        error = error_of(
            await client.call_tool(
                "workflow_next",
                {"workflowId": "test-flow", "completedSteps": [], "currentStep": "undrstand"},
            )
        )
        assert error["code"] == -32003 and error["data"]["closest"] == ["understand"]
        missing = error_of(await client.call_tool("workflow_next", {"completedSteps": []}))
        assert missing["data"]["details"] == "workflowId is required"


async def test_workflow_validate(connect):
    async with connect() as client:
        args = {"workflowId": "test-flow", "stepId": "understand"}
        assert ok(
            await client.call_tool(
                "workflow_validate", {**args, "output": "I read the requirements."}
            )
        ) == {
            "valid": True,
            "issues": [],
            "suggestions": [],
        }
        failed = ok(await client.call_tool("workflow_validate", {**args, "output": "Done."}))
        assert failed["valid"] is False
        assert set(failed["issues"]) == {"Mention the requirements", "Say at least ten characters"}
        implement = {**args, "stepId": "implement", "output": "Changed the parser."}
        assert (
            ok(await client.call_tool("workflow_validate", implement))["valid"] is True
        )  # rule does not apply
        large = ok(
            await client.call_tool(
                "workflow_validate", {**implement, "context": {"taskScope": "large"}}
            )
        )
        assert large["valid"] is False and large["issues"] == ["Large tasks need tests"]
        no_criteria = ok(
            await client.call_tool(
                "workflow_validate", {**args, "stepId": "deep-dive", "output": "x"}
            )
        )
        assert no_criteria["valid"] is True
        assert (
            error_of(
                await client.call_tool(
                    "workflow_validate", {**args, "stepId": "nope-step", "output": "x"}
                )
            )["code"]
            == -32003
        )
        assert (
            error_of(
                await client.call_tool(
                    "workflow_validate", {**args, "workflowId": "nope-flow", "output": "x"}
                )
            )["code"]
            == -32001
        )
        # An empty output is no usage error: the step's criteria judge it (as upstream's do).
        empty = ok(await client.call_tool("workflow_validate", {**args, "output": ""}))
        assert empty["valid"] is False and "Mention the requirements" in empty["issues"]


async def test_list_workflows(connect):
    async with connect() as client:
        everything = ok(await client.call_tool("list_workflows", {}))
        assert everything["running_count"] == 0 and len(everything["workflows"]) == 2
        testing = ok(
            await client.call_tool(
                "list_workflows", {"category": "testing", "include_running": True}
            )
        )
        assert [w["id"] for w in testing["workflows"]] == ["test-flow"] and testing["running"] == []
        assert error_of(await client.call_tool("list_workflows", {"category": 5}))["code"] == -32602


def new_flow(**changes) -> dict:
    definition = {key: value for key, value in TEST_FLOW.items() if key != "id"}
    definition["name"] = "New Flow"
    definition.update(changes)
    return definition


async def test_create_workflow(connect, project: Path):
    async with connect() as client:
        created = ok(
            await client.call_tool(
                "create_workflow", {"name": "new-flow", "definition": new_flow()}
            )
        )
        path = project / "workflows" / "new-flow.json"
        assert created == {"status": "created", "workflow_path": str(path.resolve())}
        assert json.loads(path.read_text())["id"] == "new-flow"
        assert "new-flow" in [
            w["id"] for w in ok(await client.call_tool("workflow_list", {}))["workflows"]
        ]

        again = error_of(
            await client.call_tool(
                "create_workflow", {"name": "new-flow", "definition": new_flow()}
            )
        )
        assert again["code"] == -32602 and "overwrite" in again["message"]
        updated = ok(
            await client.call_tool(
                "create_workflow",
                {"name": "new-flow", "definition": new_flow(name="Renamed"), "overwrite": True},
            )
        )
        assert updated["status"] == "updated"
        assert json.loads(path.read_text())["name"] == "Renamed"
        assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


async def test_create_workflow_takes_a_namespaced_id(connect, project: Path):
    async with connect() as client:
        created = ok(
            await client.call_tool(
                "create_workflow", {"name": "team.release-check", "definition": new_flow()}
            )
        )
        path = project / "workflows" / "team.release-check.json"
        assert created["workflow_path"] == str(path.resolve())
        assert json.loads(path.read_text())["id"] == "team.release-check"
        got = ok(await client.call_tool("workflow_get", {"id": "team.release-check"}))
        assert got["name"] == "New Flow"


async def test_create_workflow_refuses_invalid_definitions_and_writes_nothing(
    connect, project: Path
):
    async with connect() as client:
        broken = new_flow(steps=[{"id": "only", "title": "No prompt"}])
        error = error_of(
            await client.call_tool("create_workflow", {"name": "broken-flow", "definition": broken})
        )
        assert error["code"] == -32002
        assert error["data"]["diagnostics"][0]["pointer"].startswith("/steps/0")
        assert not (project / "workflows" / "broken-flow.json").exists()
        mismatch = error_of(
            await client.call_tool(
                "create_workflow", {"name": "other-flow", "definition": new_flow(id="x-flow")}
            )
        )
        assert mismatch["code"] == -32602


@pytest.mark.parametrize(
    "name",
    [
        "../escape",
        "/etc/passwd",
        "a/b",
        "UPPER",
        "x",
        "a" * 65,
        "..",
        "two..dots",
        "a.b.c",
        ".hidden",
    ],
)
async def test_create_workflow_refuses_names_that_escape(connect, project: Path, name):
    async with connect() as client:
        error = error_of(
            await client.call_tool("create_workflow", {"name": name, "definition": new_flow()})
        )
        assert error["code"] == -32602
        assert sorted(p.name for p in (project / "workflows").iterdir()) == [
            "ai-task-implementation.json",
            "test-flow.json",
        ]


async def test_create_workflow_refuses_a_symlink_out(connect, project: Path, tmp_path: Path):
    async with connect() as client:
        outside = tmp_path / "outside.json"
        outside.write_text("{}")
        (project / "workflows" / "evil-link.json").symlink_to(outside)
        error = error_of(
            await client.call_tool(
                "create_workflow",
                {"name": "evil-link", "definition": new_flow(), "overwrite": True},
            )
        )
        assert error["code"] == -32007
        assert outside.read_text() == "{}"


async def test_workflow_schema(connect):
    async with connect() as client:
        schema = ok(await client.call_tool("workflow_schema", {}))
        assert schema["$schema"].endswith("2020-12/schema") and "steps" in schema["properties"]


async def test_workflow_lint(connect):
    async with connect() as client:
        clean = ok(await client.call_tool("workflow_lint", {"definition": TEST_FLOW}))
        assert clean["valid"] is True and clean["errorCount"] == 0
        broken = ok(
            await client.call_tool(
                "workflow_lint", {"text": '{"id": "x1y", "steps": []', "format": "json"}
            )
        )
        assert broken["valid"] is False and broken["diagnostics"][0]["code"].startswith("WR0")
        both = error_of(
            await client.call_tool("workflow_lint", {"definition": TEST_FLOW, "text": "{}"})
        )
        assert both["code"] == -32602


async def test_resources_and_prompts(connect):
    async with connect() as client:
        uris = {str(resource.uri) for resource in (await client.list_resources()).resources}
        assert {"workrail://schema/workflow", "workrail://workflows/test-flow"} <= uris
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [
            "workrail://workflows/{id}",
            "workrail://workflows/{id}/steps/{step}",
        ]
        with pytest.raises(MCPError) as raised:
            await client.read_resource("workrail://workflows/test-flow/steps/implment")
        assert raised.value.error.code == -32003
        schema = await client.read_resource("workrail://schema/workflow")
        assert json.loads(schema.contents[0].text)["title"]
        with pytest.raises(MCPError) as raised:
            await client.read_resource("workrail://workflows/test-flwo")
        assert raised.value.error.code == -32001 and raised.value.error.data["closest"] == [
            "test-flow"
        ]
        prompt = next(p for p in (await client.list_prompts()).prompts if p.name == "test-flow")
        assert prompt.title == "Test Flow" and prompt.arguments[0].name == "task"
        started = await client.get_prompt("test-flow", {})
        assert '"workflowId": "test-flow"' in started.messages[0].content.text
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("test-flwo", {})
        assert raised.value.error.code == -32602 and raised.value.error.data["closest"] == [
            "test-flow"
        ]


async def test_create_workflow_in_the_user_directory(connect, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path / "home"))
    async with connect() as client:
        created = ok(
            await client.call_tool(
                "create_workflow",
                {"name": "mine-flow", "definition": new_flow(), "location": "user"},
            )
        )
        assert created["workflow_path"] == str(
            (tmp_path / "home" / "workflows" / "mine-flow.json").resolve()
        )
        assert (
            error_of(
                await client.call_tool(
                    "create_workflow",
                    {"name": "mine-flow", "definition": new_flow(), "location": "/etc"},
                )
            )["code"]
            == -32602
        )


async def test_a_template_call_is_checked_against_the_catalog(connect, project: Path):
    caller = new_flow(
        id="calls-tidy",
        steps=[
            {
                "id": "call",
                "title": "Call",
                "templateCall": {"templateId": "wr.templates.routine.tidy"},
            }
        ],
    )
    async with connect() as client:
        linted = ok(await client.call_tool("workflow_lint", {"definition": caller}))
        assert [d["code"] for d in linted["diagnostics"]] == ["WR703"]
        refused = error_of(
            await client.call_tool("create_workflow", {"name": "calls-tidy", "definition": caller})
        )
        assert refused["code"] == -32002
        routine = {
            "id": "wr.routine-tidy",
            "name": "Tidy",
            "steps": [{"id": "tidy", "title": "Tidy", "prompt": "Tidy {target}."}],
        }
        ok(
            await client.call_tool(
                "create_workflow", {"name": "wr.routine-tidy", "definition": routine}
            )
        )
        linted = ok(await client.call_tool("workflow_lint", {"definition": caller}))
        assert linted["valid"] and linted["diagnostics"] == []
        ok(await client.call_tool("create_workflow", {"name": "calls-tidy", "definition": caller}))
