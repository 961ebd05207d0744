"""The workflow's ``parameters`` schema and the schemas of its declared ``context``, checked and
compiled as a run will compile them."""

from __future__ import annotations

from collections.abc import Mapping

from ..definition.declared import declared_context
from ..diagnostics import Diagnostic, Severity
from ..evaluation.json_schemas import json_schema_problems
from ..text.document import WorkflowDocument
from ..text.json_pointer import escape_token

__all__ = ["parameters_diagnostics"]


def parameters_diagnostics(doc: WorkflowDocument) -> list[Diagnostic]:
    """WR403 for a schema that would not compile, WR406 for a reference that leaves it.

    Only an object is checked here: the workflow schema already reports any other type.
    """
    workflow = doc.value
    schema = workflow.get("parameters") if isinstance(workflow, Mapping) else None
    if not isinstance(schema, Mapping):
        return context_schema_diagnostics(doc)
    return [*_schema_problems(doc, "/parameters", schema), *context_schema_diagnostics(doc)]


def _schema_problems(
    doc: WorkflowDocument, at: str, schema: Mapping[str, object]
) -> list[Diagnostic]:
    out = []
    for problem in json_schema_problems(dict(schema)):
        pointer = at + problem.pointer
        out.append(
            Diagnostic(problem.code, Severity.ERROR, problem.message, pointer, doc.span(pointer))
        )
    return out


def context_schema_diagnostics(doc: WorkflowDocument) -> list[Diagnostic]:
    """The same for each variable of the declared ``context``: an answer's value is checked
    against it, and a schema that does not compile would check nothing."""
    declared = declared_context(doc.value) or {}
    return [
        finding
        for name, schema in declared.items()
        for finding in _schema_problems(doc, f"/context/{escape_token(name)}", schema)
    ]
