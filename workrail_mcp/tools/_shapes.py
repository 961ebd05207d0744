"""Argument types and result shapes shared by the tools (they become the JSON Schemas)."""

from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from workrail_engine.steps import STEP_ID_MAX_LENGTH, STEP_ID_MIN_LENGTH, STEP_ID_PATTERN

__all__ = [
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

StepId = Annotated[
    str,
    Field(
        description="A step id of that workflow (lowercase letters, digits and '-', 3-64 characters).",
        pattern=STEP_ID_PATTERN,
        min_length=STEP_ID_MIN_LENGTH,
        max_length=STEP_ID_MAX_LENGTH,
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
