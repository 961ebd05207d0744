"""Argument types and result shapes shared by the tools (they become the JSON Schemas)."""

from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.ids import (
    ID_MAX_LENGTH,
    ID_MIN_LENGTH,
    STEP_ID_PATTERN,
    WORKFLOW_ID_PATTERN,
    WORKFLOW_ID_RULE,
)

__all__ = [
    "ContextArg",
    "StepId",
    "WorkflowId",
    "WorkflowSummary",
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
        description="A step id of that workflow (lowercase letters, digits and '-', 3-64 characters).",
        pattern=STEP_ID_PATTERN,
        min_length=ID_MIN_LENGTH,
        max_length=ID_MAX_LENGTH,
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
