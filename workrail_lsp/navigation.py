"""Go to definition and find references for step ids, parameters and secrets (see
``occurrences``), and go to the workflow a routine template or a delegation names: the
workspace's file, or one of the catalog's other sources (bundled, the user's, a workflow
repository's file in the cache, which is written read-only so that an editor opens it so)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lsprotocol import types

from workrail_engine.text.document import LineIndex, parse_document

from .disk_files import read_unopened
from .documents import DocumentState
from .links import path_of, workflow_references
from .occurrences import occurrence_at, occurrences
from .positions import Positions

__all__ = ["definition", "references", "workflow_definition"]


def definition(state: DocumentState, position: types.Position) -> list[types.Location] | None:
    if not state.is_workflow:
        return None
    found = occurrence_at(state, state.positions.offset(position))
    if found is None:
        return None
    targets = [o for o in occurrences(state) if o.is_definition and o.same_name(found)]
    return [
        types.Location(uri=state.uri, range=state.positions.range(t.span)) for t in targets
    ] or None


def references(
    state: DocumentState, position: types.Position, include_declaration: bool
) -> list[types.Location] | None:
    if not state.is_workflow:
        return None
    found = occurrence_at(state, state.positions.offset(position))
    if found is None:
        return None
    return [
        types.Location(uri=state.uri, range=state.positions.range(o.span))
        for o in occurrences(state)
        if o.same_name(found) and (include_declaration or not o.is_definition)
    ]


def workflow_definition(
    state: DocumentState, position: types.Position, workflow_paths: Mapping[str, str | None]
) -> list[types.Location] | None:
    """At a ``templateCall.templateId`` or a delegation's ``workflowId``: the ``id`` of the
    workflow file that provides it (``workflow_paths``: `WorkspaceIndex.workflow_paths`)."""
    if not state.is_workflow:
        return None
    offset = state.positions.offset(position)
    for reference in workflow_references(state):
        if not reference.node.start <= offset <= reference.node.end:
            continue
        path = path_of(reference, workflow_paths)
        if path is None:
            return None
        opened = state.path is not None and Path(path).resolve() == Path(state.path).resolve()
        text = state.text if opened else read_unopened(path)
        span = parse_document(text, path).tolerant.value_span("/id")
        place = (
            Positions(LineIndex(text), state.positions.encoding).range(span)
            if span is not None
            else types.Range(types.Position(0, 0), types.Position(0, 0))
        )
        return [types.Location(uri=Path(path).resolve().as_uri(), range=place)]
    return None
