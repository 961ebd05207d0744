"""Document links: ``$schema`` to the schema, a loop's ``body`` step id to that step, a
``functionReferences`` entry to its ``functionDefinitions`` entry, a ``templateCall`` routine or a
delegation's ``workflowId`` to the workflow file that defines it (the workspace's, else one of
the catalog's other sources: a workflow repository's cached, read-only file)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types

from workrail_engine.definition.routine_templates import routine_ids_for
from workrail_engine.definition.steps import walk_steps
from workrail_engine.diagnostics import Span
from workrail_engine.text.tolerant_tree import Node

from .documents import DocumentState
from .workflow_facts import facts_of

__all__ = ["WorkflowReference", "document_links", "path_of", "workflow_references"]


def document_links(
    state: DocumentState, workflow_paths: Mapping[str, str | None] | None = None
) -> list[types.DocumentLink] | None:
    """``workflow_paths``: path → workflow id of the workflow files a routine or a delegation may
    lead to (`WorkspaceIndex.workflow_paths`)."""
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
    out.extend(_routine_links(state, workflow_paths or {}))
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


@dataclass(frozen=True)
class WorkflowReference:
    """A place in a workflow that names another workflow: a ``templateCall`` routine or a
    delegation's ``workflowId``, with the ids that would provide it (first found wins)."""

    node: Node
    candidates: tuple[str, ...]


def workflow_references(state: DocumentState) -> list[WorkflowReference]:
    value = state.value
    if not isinstance(value, Mapping):
        return []
    out = []
    for site in walk_steps(value):
        named: list[tuple[str, tuple[str, ...]]] = []
        call = site.step.get("templateCall")
        template = call.get("templateId") if isinstance(call, Mapping) else None
        if isinstance(template, str):  # upstream's naming: routine_templates.routine_ids_for
            named.append(
                (f"{site.pointer}/templateCall/templateId", tuple(routine_ids_for(template)))
            )
        delegations = site.step.get("parallelDelegations")
        for index, delegation in enumerate(delegations if isinstance(delegations, list) else []):
            target = delegation.get("workflowId") if isinstance(delegation, Mapping) else None
            if isinstance(target, str):
                named.append((f"{site.pointer}/parallelDelegations/{index}/workflowId", (target,)))
        for pointer, candidates in named:
            found = state.tree.locate(pointer)
            if found is not None:
                out.append(WorkflowReference(found[1], candidates))
    return out


def path_of(reference: WorkflowReference, workflow_paths: Mapping[str, str | None]) -> str | None:
    """The file of the workflow ``reference`` names (``workflow_paths``: path → id, a later path
    winning an id, as `WorkspaceIndex.workflow_paths` orders them)."""
    by_id = {wid: path for path, wid in workflow_paths.items() if wid}
    return next((by_id[i] for i in reference.candidates if i in by_id), None)


def _routine_links(
    state: DocumentState, workflow_paths: Mapping[str, str | None]
) -> list[types.DocumentLink]:
    """A routine template or a delegation → the file of the workflow that provides it."""
    out = []
    for reference in workflow_references(state):
        path = path_of(reference, workflow_paths)
        if path is not None:
            out.append(_link(state, reference.node, Path(path).resolve().as_uri()))
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
