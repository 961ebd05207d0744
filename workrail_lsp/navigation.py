"""Go to definition and find references for step ids (``id``, loop ``body``, ``{{steps.ID…}}``)."""

from __future__ import annotations

from lsprotocol import types

from .documents import DocumentState
from .step_references import occurrence_at, occurrences

__all__ = ["definition", "references"]


def definition(state: DocumentState, position: types.Position) -> list[types.Location] | None:
    if not state.is_workflow:
        return None
    found = occurrence_at(state, state.positions.offset(position))
    if found is None:
        return None
    targets = [o for o in occurrences(state) if o.is_definition and o.step_id == found.step_id]
    return [types.Location(uri=state.uri, range=state.positions.range(t.span)) for t in targets] or None


def references(state: DocumentState, position: types.Position, include_declaration: bool) -> list[types.Location] | None:
    if not state.is_workflow:
        return None
    found = occurrence_at(state, state.positions.offset(position))
    if found is None:
        return None
    return [
        types.Location(uri=state.uri, range=state.positions.range(o.span))
        for o in occurrences(state)
        if o.step_id == found.step_id and (include_declaration or not o.is_definition)
    ]
