"""Argument types and result shapes shared by the tools (they become the JSON Schemas)."""

from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

__all__ = [
    "STEP_ID_PATTERN",
    "ArtifactsArg",
    "ContextArg",
    "StepId",
    "WorkflowId",
    "WorkflowSummary",
]

_ID_PATTERN = r"^[a-z0-9-]+$"

WorkflowId = Annotated[
    str,
    Field(
        description="A workflow id as listed by workflow_list (lowercase letters, digits and '-', 3-64 characters).",
        pattern=_ID_PATTERN,
        min_length=3,
        max_length=64,
    ),
]

# A step injected by a template has the id "<calling step>.<routine step>".
STEP_ID_PATTERN = r"^[a-z0-9-]+(\.[a-z0-9-]+)?$"

StepId = Annotated[
    str,
    Field(
        description=(
            "A step id of that workflow as served (lowercase letters, digits and '-'; a step a "
            "template injected is '<calling step>.<routine step>')."
        ),
        pattern=STEP_ID_PATTERN,
        min_length=3,
        max_length=129,
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
