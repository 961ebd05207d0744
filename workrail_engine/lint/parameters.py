"""The workflow's ``parameters`` schema, checked and compiled as a run will compile it."""

from __future__ import annotations

from collections.abc import Mapping

from ..diagnostics import Diagnostic, Severity
from ..evaluation.json_schemas import json_schema_problems
from ..text.document import WorkflowDocument

__all__ = ["parameters_diagnostics"]


def parameters_diagnostics(doc: WorkflowDocument) -> list[Diagnostic]:
    """WR403 for a schema that would not compile, WR406 for a reference that leaves it.

    Only an object is checked here: the workflow schema already reports any other type.
    """
    workflow = doc.value
    schema = workflow.get("parameters") if isinstance(workflow, Mapping) else None
    if not isinstance(schema, Mapping):
        return []
    out = []
    for problem in json_schema_problems(dict(schema)):
        pointer = "/parameters" + problem.pointer
        out.append(
            Diagnostic(problem.code, Severity.ERROR, problem.message, pointer, doc.span(pointer))
        )
    return out
