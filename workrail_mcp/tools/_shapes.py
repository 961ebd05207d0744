"""Argument types and result shapes shared by the tools (they become the JSON Schemas)."""

from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.definition.ids import (
    ID_MAX_LENGTH,
    ID_MIN_LENGTH,
    SERVED_STEP_ID_MAX_LENGTH,
    SERVED_STEP_ID_PATTERN,
    WORKFLOW_ID_PATTERN,
    WORKFLOW_ID_RULE,
)
from workrail_engine.result_shapes import JsonTypes

__all__ = [
    "AnyJson",
    "ArtifactsArg",
    "ContextArg",
    "StepId",
    "WorkflowId",
    "WorkflowSummary",
]

# A bare ``Any`` becomes the schema ``{}``: valid, but it says nothing, and schema linters (the
# MCP Inspector's --strict) flag it. These say which JSON types the value takes, one ``type`` per
# ``anyOf`` branch (a ``type`` array is lost on clients that map schemas onto one-type dialects).
# A step's output is typed so in the engine's results (`workrail_engine.result_shapes.StepOutput`).
AnyJson = Annotated[
    Any,
    JsonTypes("Any JSON value.", ("object", "array", "string", "number", "boolean", "null")),
]
WorkflowId = Annotated[
    str,
    Field(
        description=f"A workflow id as listed by workflow_list ({WORKFLOW_ID_RULE}).",
        pattern=WORKFLOW_ID_PATTERN,
        min_length=ID_MIN_LENGTH,
        max_length=ID_MAX_LENGTH,
    ),
]

StepId = Annotated[
    str,
    Field(
        description=(
            "A step id of that workflow as served (lowercase letters, digits and '-'; a step a "
            "template injected is '<calling step>.<routine step>')."
        ),
        pattern=SERVED_STEP_ID_PATTERN,
        min_length=ID_MIN_LENGTH,
        max_length=SERVED_STEP_ID_MAX_LENGTH,
    ),
]

ArtifactsArg = Annotated[
    list[dict[str, Any]] | None,
    Field(
        description=(
            "Optional: structured artifacts you hand over with the step, each an object whose "
            '"kind" names it. A step with an output contract needs its artifact (e.g. '
            '{"kind": "wr.loop_control", "decision": "continue" | "stop"} ends a loop iteration '
            'whose decision is yours); a step with assessments needs {"kind": "wr.assessment", '
            '"assessmentId": ..., "dimensions": {"<dimension>": "<level>"}}. The step\'s guidance '
            "says which."
        ),
    ),
]

ContextArg = Annotated[
    dict[str, Any] | None,
    Field(
        description=(
            "Optional execution context: variables that step conditions and context-aware validation "
            'rules read, e.g. {"taskScope": "large", "userExpertise": "expert", "complexity": 0.8}.'
        ),
    ),
]


class WorkflowSummary(TypedDict):
    id: str
    name: str
    description: str
    category: str
    version: str
    source: NotRequired[str]
