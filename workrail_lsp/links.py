"""Document links: ``$schema`` to the schema, a loop's ``body`` step id to that step, a
``functionReferences`` entry to its ``functionDefinitions`` entry, a ``templateCall`` routine to
the workflow file that defines it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types

from workrail_engine.definition.routine_templates import routine_ids_for
from workrail_engine.definition.steps import walk_steps
from workrail_engine.diagnostics import Span
from workrail_engine.text.tolerant_tree import Node

from .documents import DocumentState
from .workflow_facts import facts_of

__all__ = ["document_links"]


def document_links(
    state: DocumentState, workflow_paths: Mapping[str, str | None] | None = None
) -> list[types.DocumentLink] | None:
    """``workflow_paths``: path → workflow id of the workspace's workflow files (for routines)."""
    value = state.value
    if not state.is_workflow or not isinstance(value, Mapping):
        return None
    out: list[types.DocumentLink] = []
    schema = value.get("$schema")
    found = state.tree.locate("/$schema")
    if isinstance(schema, str) and found is not None:
        target = _schema_target(schema, state.path)
        if target is not None:
            out.append(_link(state, found[1], target))
    facts = facts_of(value)
    for site in walk_steps(value):
        body = site.step.get("body")
        if not isinstance(body, str) or body not in facts.steps:
            continue
        located = state.tree.locate(f"{site.pointer}/body")
        step = state.tree.locate(facts.step_pointers[body] + "/id")
        if located is None or step is None:
            continue
        target = _here(state, step[1])
        out.append(_link(state, located[1], target))
    out.extend(_function_links(state, value))
    out.extend(_routine_links(state, value, workflow_paths or {}))
    return out


def _here(state: DocumentState, node: Node) -> str:
    line, column = state.line_index.position(node.content_start or node.start)
    # VS Code and Neovim open "#L<line>,<column>" (1-based) at that place of the file.
    return f"{state.uri}#L{line + 1},{column + 1}"


def _function_links(state: DocumentState, value: Mapping[str, Any]) -> list[types.DocumentLink]:
    """``"name()"`` in a step's functionReferences → the ``name`` of a functionDefinitions entry
    (the step's own, its loop's, or the workflow's)."""
    definitions: dict[str, Node] = {}
    for pointer, container in [("", value), *((s.pointer, s.step) for s in walk_steps(value))]:
        entries = container.get("functionDefinitions")
        if not isinstance(entries, list):
            continue
        for index, entry in enumerate(entries):
            name = entry.get("name") if isinstance(entry, Mapping) else None
            found = state.tree.locate(f"{pointer}/functionDefinitions/{index}/name")
            if isinstance(name, str) and found is not None:
                definitions.setdefault(name, found[1])
    out = []
    for site in walk_steps(value):
        references = site.step.get("functionReferences")
        if not isinstance(references, list):
            continue
        for index, reference in enumerate(references):
            name = (
                reference[:-2] if isinstance(reference, str) and reference.endswith("()") else None
            )
            found = state.tree.locate(f"{site.pointer}/functionReferences/{index}")
            if name in definitions and found is not None:
                out.append(_link(state, found[1], _here(state, definitions[name])))
    return out


def _routine_links(
    state: DocumentState, value: Mapping[str, Any], workflow_paths: Mapping[str, str | None]
) -> list[types.DocumentLink]:
    """``templateCall.templateId`` ``wr.templates.routine.x`` → the file of the routine that
    provides it (``routine_templates.routine_ids_for``: upstream's naming)."""
    by_id = {wid: path for path, wid in workflow_paths.items() if wid}
    out = []
    for site in walk_steps(value):
        call = site.step.get("templateCall")
        template = call.get("templateId") if isinstance(call, Mapping) else None
        if not isinstance(template, str):
            continue
        path = next((by_id[i] for i in routine_ids_for(template) if i in by_id), None)
        found = state.tree.locate(f"{site.pointer}/templateCall/templateId")
        if path is not None and found is not None:
            out.append(_link(state, found[1], Path(path).resolve().as_uri()))
    return out


def _link(state: DocumentState, node: Node, target: str) -> types.DocumentLink:
    span = (
        Span(node.content_start, node.content_end)
        if node.kind == "string"
        else Span(node.start, node.end)
    )
    # No tooltip: not every client supports one (Neovim's captured capabilities do not).
    return types.DocumentLink(range=state.positions.range(span), target=target)


def _schema_target(schema: str, path: str | None) -> str | None:
    if schema.startswith(("http://", "https://", "file:")):
        return schema
    if path is None:
        return None
    return (Path(path).parent / schema).resolve().as_uri()
