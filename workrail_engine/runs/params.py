"""Checking a run's ``parameters`` against the workflow's ``parameters`` schema, before anything runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..definition.declared import with_parameter_defaults
from ..errors import InvalidParams, InvalidWorkflow, closest
from ..evaluation.json_schemas import compiled_schema, json_schema_problems

__all__ = ["check_parameters", "refuse_undeclared"]


def _where(path: list[Any]) -> str:
    return "parameters" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _declared_names(schema: Any) -> list[str] | None:
    """The parameter names a workflow declares, or None when its schema lets any name in.

    A schema with ``properties`` declares those names, unless it opens itself to others with
    ``additionalProperties`` (other than false) or ``patternProperties``; JSON Schema alone would
    accept a misspelt name silently and the run would go on with the default."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return None
    if schema.get("additionalProperties", False) is not False or "patternProperties" in schema:
        return None
    return [str(name) for name in schema["properties"]]


def refuse_undeclared(workflow: Mapping[str, Any], names: Iterable[str]) -> None:
    """Raise `InvalidParams` for a parameter name the workflow does not declare (with the
    declared names and the closest one); nothing happens when every name is declared."""
    declared = _declared_names(workflow.get("parameters"))
    if declared is None:
        return
    unknown = [name for name in names if name not in declared]
    if not unknown:
        return
    hints = {name: closest(name, declared, n=1) for name in unknown}
    parts = []
    for name in unknown:
        hint = hints[name]
        parts.append(f"{name!r}" + (f" (did you mean {hint[0]!r}?)" if hint else ""))
    listed = ", ".join(declared) or "none"
    raise InvalidParams(
        f"workflow {workflow.get('id')!r} has no parameter {', '.join(parts)}; "
        f"its parameters: {listed}",
        details=f"unknown parameter(s): {', '.join(unknown)}; declared: {listed}",
        unknown=unknown,
        declared=declared,
        closest=[hint[0] for hint in hints.values() if hint],
    )


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
    refuse_undeclared(workflow, given)
    values = with_parameter_defaults(workflow, given)
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
