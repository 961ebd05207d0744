"""Rename a step id everywhere it is used; an invalid or taken new id is refused with an error."""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from workrail_engine.definition.ids import is_step_id

from .documents import DocumentState
from .occurrences import occurrence_at, occurrences

__all__ = ["RenameRefused", "prepare", "rename"]

_REQUEST_FAILED = -32803  # LSP ErrorCodes.RequestFailed


class RenameRefused(JsonRpcException):
    CODE = _REQUEST_FAILED


def prepare(state: DocumentState, position: types.Position) -> types.PrepareRenameResult | None:
    if not state.is_workflow:
        return None
    found = occurrence_at(state, state.positions.offset(position))
    if found is None or found.namespace != "steps":
        return None
    return types.PrepareRenamePlaceholder(
        range=state.positions.range(found.span), placeholder=found.name
    )


def rename(
    state: DocumentState, position: types.Position, new_name: str
) -> types.WorkspaceEdit | None:
    if not state.is_workflow:
        return None
    found = occurrence_at(state, state.positions.offset(position))
    if found is None or found.namespace != "steps":
        return None
    if not is_step_id(new_name):
        raise RenameRefused(
            f"{new_name!r} is not a valid step id: use 3-64 lowercase letters, digits and hyphens (e.g. 'review-code')"
        )
    everything = occurrences(state)
    if new_name != found.name and any(
        o.namespace == "steps" and o.is_definition and o.name == new_name for o in everything
    ):
        raise RenameRefused(f"A step with id {new_name!r} already exists")
    edits = [
        types.TextEdit(range=state.positions.range(o.span), new_text=new_name)
        for o in everything
        if o.same_name(found)
    ]
    return types.WorkspaceEdit(changes={state.uri: edits})
