"""What a workflow declares for its templates: its parameters, its secrets and its context
variables, read tolerantly.

Lint, the language server, the CLI and the runs all ask these two questions of a definition that
may be half-typed; malformed declarations read as "nothing declared" (the schema reports them).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = [
    "declared_context",
    "declared_parameters",
    "declared_secrets",
    "declared_sets",
    "required_sets",
    "with_context_defaults",
    "with_parameter_defaults",
]


def declared_parameters(workflow: Any) -> dict[str, Mapping[str, Any]]:
    """Parameter name → its JSON Schema, from ``parameters.properties`` (in document order)."""
    parameters = workflow.get("parameters") if isinstance(workflow, Mapping) else None
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    if not isinstance(properties, Mapping):
        return {}
    return {
        name: spec if isinstance(spec, Mapping) else {}
        for name, spec in properties.items()
        if isinstance(name, str)
    }


def with_parameter_defaults(workflow: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` plus the ``default`` of each declared parameter it leaves out (as Prefect and
    GitHub Actions do): what a run starts with, and what the next step is rendered with."""
    values = dict(given)
    for name, spec in declared_parameters(workflow).items():
        if name not in values and "default" in spec:
            values[name] = copy.deepcopy(spec["default"])
    return values


def declared_secrets(workflow: Any) -> list[str]:
    """The names in ``secrets`` (values come from the environment at run time)."""
    secrets = workflow.get("secrets") if isinstance(workflow, Mapping) else None
    return [name for name in secrets if isinstance(name, str)] if isinstance(secrets, list) else []


def declared_context(workflow: Any) -> dict[str, Mapping[str, Any]] | None:
    """The workflow's declared variables, name to schema (a `true` schema as `{}`); None when it
    declares none."""
    declared = workflow.get("context") if isinstance(workflow, Mapping) else None
    if not isinstance(declared, Mapping):
        return None
    return {
        # a dict first: isinstance of Mapping goes through ABCMeta, once per variable and check
        name: schema if type(schema) is dict or isinstance(schema, Mapping) else {}
        for name, schema in declared.items()
        if isinstance(name, str)
    }


def declared_sets(workflow: Any, step: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The declared variables of ``step``'s ``sets``, name to schema (undeclared names left out:
    WR309 reports them)."""
    declared = declared_context(workflow) or {}
    names = step.get("sets")
    if not isinstance(names, list):
        return {}
    return {name: declared[name] for name in names if isinstance(name, str) and name in declared}


def required_sets(workflow: Any, step: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The variables an answer to ``step`` must set: those of its ``sets`` that the workflow
    declares without a ``default`` (a ``default`` makes one optional)."""
    return {
        name: schema
        for name, schema in declared_sets(workflow, step).items()
        if "default" not in schema
    }


def with_context_defaults(workflow: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """``context`` plus the declared ``default`` of each variable of the workflow's ``context``
    it does not hold: what a run, a session and the stateless next step start from, so that a
    condition or a template reads an optional variable nobody set as its declared value (as a
    parameter left out takes its ``default``)."""
    values = dict(context)
    for name, schema in (declared_context(workflow) or {}).items():
        if name not in values and "default" in schema:
            values[name] = copy.deepcopy(schema["default"])
    return values
