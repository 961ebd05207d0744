"""The tools' JSON schemas are read from ``tool_schemas.json`` instead of derived at each start
(the cold start); what the server publishes and validates stays what the SDK derives."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from workrail_mcp import create_server
from workrail_mcp.tools import EDITIONS, binding
from workrail_mcp.tools.binding import (
    RECORDED_SCHEMAS,
    ToolEnv,
    ToolRegistry,
    client_function,
    derived_tool,
    record_key,
)
from workrail_mcp.tools.recorded import record_schemas, schemas_text

DERIVED = {
    ("default", "workflow_schema"),
    ("upstream", "list_workflows"),
    ("upstream", "continue_workflow"),
}
SPECS = {(edition, spec.name): spec for edition, specs in EDITIONS.items() for spec in specs}


def test_the_recorded_schemas_are_what_the_sdk_derives():
    assert RECORDED_SCHEMAS.read_text(encoding="utf-8") == schemas_text(record_schemas()), (
        "workrail_mcp/tools/tool_schemas.json is out of date: run "
        "`python -m workrail_mcp.tools.recorded`"
    )


def _same_tool(ours: Any, sdk: Any) -> None:
    """Every field the SDK reads of a `Tool`, the argument model by its schema and fields."""
    assert ours.model_dump(exclude={"fn", "fn_metadata"}) == sdk.model_dump(
        exclude={"fn", "fn_metadata"}
    )
    assert ours.output_schema == sdk.output_schema
    # a TypedDict itself; for a dict result, an Annotated type the SDK makes anew each time
    assert repr(ours.fn_metadata.output_model) == repr(sdk.fn_metadata.output_model)
    assert ours.fn_metadata.wrap_output == sdk.fn_metadata.wrap_output
    ours_args, sdk_args = ours.fn_metadata.arg_model, sdk.fn_metadata.arg_model
    assert ours_args.model_json_schema() == sdk_args.model_json_schema()
    assert list(ours_args.model_fields) == list(sdk_args.model_fields)


@pytest.mark.parametrize(("edition", "name"), sorted(SPECS))
def test_each_tool_is_bound_from_its_record_as_the_sdk_binds_it(edition, name, monkeypatch):
    spec = SPECS[edition, name]
    derived: list[str] = []

    def counted(spec: Any, run: Any) -> Any:
        derived.append(spec.name)
        return derived_tool(spec, run)

    monkeypatch.setattr(binding, "derived_tool", counted)
    ours = ToolRegistry(ToolEnv(catalog=None)).add(spec)
    # A result that is no TypedDict gets an output model the SDK makes: derived as before (the
    # workflow schema; upstream's list_workflows and continue_workflow).
    assert derived == ([name] if (edition, name) in DERIVED else [])
    _same_tool(ours, derived_tool(spec, client_function(spec, spec.fn)))


def test_a_record_that_no_longer_matches_its_signature_is_not_used():
    spec = SPECS["default", "workflow_next"]
    records = record_schemas()
    stale = records[record_key(spec)]
    stale["signature"] = "0" * 16
    stale["inputSchema"] = {"type": "object", "properties": {}}  # what an old signature took
    ours = ToolRegistry(ToolEnv(catalog=None), _records=records).add(spec)
    _same_tool(ours, derived_tool(spec, client_function(spec, spec.fn)))
    assert "workflowId" in ours.parameters["properties"]


def test_a_server_without_the_file_derives_every_tool(monkeypatch, tmp_path):
    monkeypatch.setattr(binding, "RECORDED_SCHEMAS", tmp_path / "absent.json")
    for spec in EDITIONS["default"]:
        ours = ToolRegistry(ToolEnv(catalog=None)).add(spec)
        _same_tool(ours, derived_tool(spec, client_function(spec, spec.fn)))


@pytest.mark.parametrize("edition", sorted(EDITIONS))
async def test_tools_list_through_the_sdk_client_publishes_the_derived_schemas(catalog, edition):
    async with Client(create_server(catalog, tools_edition=edition)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(listed) == [spec.name for spec in EDITIONS[edition]]
    for spec in EDITIONS[edition]:
        sdk = derived_tool(spec, client_function(spec, spec.fn))
        assert listed[spec.name].input_schema == sdk.parameters
        assert listed[spec.name].output_schema == sdk.output_schema
