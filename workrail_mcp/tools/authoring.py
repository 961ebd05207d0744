"""Tools for agents that write workflows: the JSON Schema, and lint of a draft."""

import json
from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.errors import InvalidParams
from workrail_mcp.tools.binding import ToolEnv, ToolSpec, read_only

__all__ = ["SPECS", "workflow_lint", "workflow_schema"]


def workflow_schema(env: ToolEnv) -> dict[str, Any]:
    from workrail_engine.schema import load_schema

    return load_schema()


class LintReport(TypedDict):
    valid: bool
    errorCount: int
    warningCount: int
    diagnostics: list[dict[str, Any]]


def workflow_lint(
    env: ToolEnv,
    definition: Annotated[
        dict[str, Any] | None,
        Field(description="The draft workflow as an object. Give this or text."),
    ] = None,
    # Typed `str`, not `str | None`: the SDK decodes a string argument that holds JSON unless
    # the field is exactly `str`, which turned the text of a JSON draft into an object.
    text: Annotated[
        str,
        Field(
            description="The draft as file text (JSON or YAML), when positions in that text matter. Give this or definition."
        ),
    ] = None,
    format: Annotated[
        Literal["json", "yaml"] | None, Field(description="The format of text (default: json).")
    ] = None,
) -> LintReport:
    from workrail_engine.lint import lint_document
    from workrail_engine.text.document import parse_document

    if (definition is None) == (text is None):
        raise InvalidParams("Give exactly one of definition or text")
    if definition is not None:
        text, format = json.dumps(definition, indent=2, ensure_ascii=False) + "\n", "json"
    # The catalog's ids let a templateCall be checked against the routines the agent can use.
    # and its routines let it be compiled, as it will be when served (WR811: too large).
    document = parse_document(text or "", fmt=format or "json")
    diagnostics = lint_document(document, env.catalog.ids(), env.catalog.routine)
    errors = sum(1 for d in diagnostics if d.is_error)
    return {
        "valid": errors == 0,
        "errorCount": errors,
        "warningCount": len(diagnostics) - errors,
        "diagnostics": [d.to_dict() for d in diagnostics],
    }


SPECS = [
    ToolSpec(
        workflow_schema,
        name="workflow_schema",
        title="Workflow JSON Schema",
        description=(
            "Get the JSON Schema (2020-12) that every workflow file follows, with a description of "
            "each property. Call it before writing a workflow for create_workflow. No arguments."
        ),
        annotations=read_only("Workflow JSON Schema"),
        output_schema={"type": "object", "description": "The workflow JSON Schema (2020-12)."},
    ),
    ToolSpec(
        workflow_lint,
        name="workflow_lint",
        title="Check a draft workflow",
        description=(
            "Check a draft workflow without saving it: schema, step structure, templates, "
            "conditions and validation rules. Pass {definition} (an object) or {text, format?}. "
            "Returns {valid, errorCount, warningCount, diagnostics: [{code, severity, message, "
            "pointer, span}]}; pointer is the JSON pointer of the offending value. Fix every error, "
            "then call create_workflow."
        ),
        annotations=read_only("Check a draft workflow"),
    ),
]
