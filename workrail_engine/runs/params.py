"""Checking a run's ``parameters`` against the workflow's ``parameters`` schema, before anything runs."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .._json_output import compiled_schema, json_schema_problems
from ..errors import InvalidParams, InvalidWorkflow

__all__ = ["check_parameters"]


def _where(path: list[Any]) -> str:
    return "parameters" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _with_defaults(schema: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level ``default`` values fill in what the caller left out (as Prefect and GitHub do)."""
    values = dict(given)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            if name not in values and isinstance(prop, Mapping) and "default" in prop:
                values[name] = copy.deepcopy(prop["default"])
    return values


def check_parameters(workflow: Mapping[str, Any], given: Any) -> dict[str, Any]:
    """The parameters with defaults applied; raises `InvalidParams` listing every problem."""
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise InvalidParams("parameters must be an object", details=f"got {type(given).__name__}")
    schema = workflow.get("parameters")
    if schema is None:
        return dict(given)
    if not isinstance(schema, Mapping):
        raise InvalidWorkflow("the workflow's parameters schema is not an object")
    values = _with_defaults(schema, given)
    # The same check and compilation as `workrail validate` (no reference leaves the schema).
    problems_in_schema = json_schema_problems(dict(schema))
    if problems_in_schema:
        first = problems_in_schema[0]
        raise InvalidWorkflow(
            f"the workflow's parameters schema is invalid at /parameters{first.pointer}: "
            f"{first.message}",
            diagnostics=[p.under("/parameters").to_dict() for p in problems_in_schema],
        )
    validator = compiled_schema(dict(schema))
    problems = [
        {"path": _where(list(error.instance_path)), "message": error.message}
        for error in validator.iter_errors(values)
    ]
    if problems:
        details = "; ".join(f"{p['path']}: {p['message']}" for p in problems)
        raise InvalidParams(
            f"{len(problems)} problem(s) with the parameters of workflow {workflow.get('id')!r}: {details}",
            details=details,
            problems=problems,
        )
    return values
