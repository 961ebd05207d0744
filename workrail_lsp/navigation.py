"""Go to definition and find references for step ids, parameters and secrets (see ``occurrences``)."""

from __future__ import annotations

from lsprotocol import types

from .documents import DocumentState
from .occurrences import occurrence_at, occurrences

__all__ = ["definition", "references"]


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
