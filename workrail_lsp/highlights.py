"""Document highlights: every occurrence of the step id (parameter, secret) under the cursor; the
definition is marked as written, the uses as read."""

from __future__ import annotations

from lsprotocol import types

from .documents import DocumentState
from .occurrences import occurrence_at, occurrences

__all__ = ["highlights"]


def highlights(
    state: DocumentState, position: types.Position
) -> list[types.DocumentHighlight] | None:
    if not state.is_workflow:
        return None
    found = occurrence_at(state, state.positions.offset(position))
    if found is None:
        return None
    return [
        types.DocumentHighlight(
            range=state.positions.range(o.span),
            kind=types.DocumentHighlightKind.Write
            if o.is_definition
            else types.DocumentHighlightKind.Read,
        )
        for o in occurrences(state)
        if o.same_name(found)
    ]
