"""Code lens on each workflow: "Preview steps" (the order the next-step engine gives with an empty
context, shown as a message) and "Validate workspace" (the workspace validation command); and on
each step, how many recorded histories pass through it (`history_lens`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from workrail_engine.diagnostics import Span
from workrail_engine.serving.navigator import next_step

from .configuration import PREVIEW_STEPS, VALIDATE_WORKSPACE
from .documents import DocumentState
from .history_lens import history_lenses

__all__ = ["code_lenses", "preview_steps"]

_MAX_STEPS = 200  # loops can repeat steps; a preview shows the start of the walk


def code_lenses(state: DocumentState) -> list[types.CodeLens] | None:
    root = state.tree.root
    if not state.is_workflow or root is None or root.kind != "object":
        return None
    at = state.tree.key_span("/id") or Span(root.start, min(root.start + 1, root.end))
    where = state.positions.range(at)
    return [
        types.CodeLens(
            range=where,
            command=types.Command(
                title="Preview steps", command=PREVIEW_STEPS, arguments=[state.uri]
            ),
        ),
        types.CodeLens(
            range=where,
            command=types.Command(title="Validate workspace", command=VALIDATE_WORKSPACE),
        ),
        *history_lenses(state),
    ]


def preview_steps(workflow: Any) -> dict[str, Any]:
    """The step ids in the order the engine hands them out with an empty context."""
    if not isinstance(workflow, Mapping):
        return {"steps": [], "message": "The workflow cannot be read yet."}
    order: list[str] = []
    try:
        while len(order) < _MAX_STEPS:
            result = next_step(workflow, order, {})
            step = result.step
            if result.is_complete or not isinstance(step, Mapping):
                break
            step_id = step.get("id")
            if not isinstance(step_id, str) or (order and order[-1] == step_id):
                break
            order.append(step_id)
    except Exception as error:  # an incomplete workflow: show how far the walk got, and why
        return {"steps": order, "message": _message(order, f" (stopped: {error})")}
    more = " …" if len(order) >= _MAX_STEPS else ""
    return {"steps": order, "message": _message(order, more)}


def _message(order: list[str], tail: str) -> str:
    walk = " → ".join(order) if order else "no step runs"
    return f"With an empty context: {walk}{tail}"
