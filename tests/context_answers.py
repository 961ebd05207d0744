"""What a scripted agent sends for the context variables a step asks it to set (`sets`): a value
each variable's declaration in the workflow's `context` allows. The walks of the bundled
workflows answer with it, as an agent reading the step's request would."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workrail_engine.definition.steps import walk_steps


def a_value_it_allows(schema: Mapping[str, Any]) -> Any:
    """The first value of the schema's ``enum``, else one of its ``type`` within its bounds."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return schema.get("minimum", 0)
    if kind == "array":
        items = schema.get("items")
        return [a_value_it_allows(items)] if isinstance(items, Mapping) else []
    if kind == "object":
        return {}
    return "a value"


def context_asked(workflow: Mapping[str, Any], step_id: str) -> dict[str, Any]:
    """A value for each declared variable that step ``step_id`` sets."""
    declared = workflow.get("context") or {}
    for site in walk_steps(workflow):
        if site.id == step_id:
            names = site.step.get("sets") or []
            return {name: a_value_it_allows(declared[name]) for name in names if name in declared}
    return {}


REQUEST = "Set these context variables when you answer this step:\n"


def names_asked(prompt: str) -> list[str]:
    """The variables a served prompt asks the agent to set, as the agent reads them: the lines
    of the generated request (`- name (description): allowed values`)."""
    if REQUEST not in prompt:
        return []
    lines = prompt.split(REQUEST, 1)[1].split("\n\n", 1)[0].splitlines()
    return [line[2:].split(" ", 1)[0].rstrip(":") for line in lines if line.startswith("- ")]
