"""Where a session stands after an answer: the one rule the session service applies when it moves
a session, and replay applies to a recorded session walked against a workflow as it is now.

A session's state is ``{completed, context, outputs, ...}``; ``pending`` is the navigator's next
step as served. Nothing here reads or writes the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..evaluation.templates import StepOutput
from ..serving.navigator import next_step

__all__ = ["answer_context", "moved_state", "with_outputs"]


def with_outputs(context: Mapping[str, Any], outputs: Mapping[str, Any]) -> dict[str, Any]:
    """``context`` with the session's own ``steps``: each answered step that a later step reads
    (the navigator's ``outputTo``), its output its notes, whose artifacts' fields are read by
    name. A ``steps`` the agent sent is replaced: a session knows its answers."""
    steps = {
        step_id: {"output": StepOutput(kept["notes"] or "", kept["fields"])}
        for step_id, kept in outputs.items()
    }
    return {**context, "steps": steps}


def answer_context(state: Mapping[str, Any], given_context: Mapping[str, Any]) -> dict[str, Any]:
    """What the checks of an answer (and the navigation after it) see: the session's context,
    the answer's own context over it, and the outputs of earlier steps."""
    return with_outputs({**state["context"], **given_context}, state.get("outputs") or {})


def moved_state(
    definition: Mapping[str, Any],
    state: Mapping[str, Any],
    pending: Mapping[str, Any],
    step_id: str,
    notes: str | None,
    artifacts: Sequence[Any],
    context: Mapping[str, Any],
    *,
    rendered: bool = True,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the navigator's next step, the session's new state) once ``step_id`` is answered with
    ``notes`` and ``artifacts``; ``context`` is `answer_context`'s. ``rendered=False``: the next
    step's prompt and guidance are not rendered (replay reads where the walk goes)."""
    completed = [*state["completed"], step_id]
    outputs = state.get("outputs") or {}
    if f"steps.{step_id}.output" in (pending.get("nextAction") or {}).get("outputTo", []):
        outputs = {**outputs, step_id: {"notes": notes, "fields": _fields(artifacts)}}
    found = next_step(
        definition,
        completed,
        with_outputs(context, outputs),
        artifacts=artifacts,
        rendered=rendered,
    ).to_dict()
    found["context"].pop("steps", None)  # rebuilt from `outputs` for every step
    moved = {**state, "completed": completed, "context": found["context"], "outputs": outputs}
    return found, moved


def _fields(artifacts: Sequence[Any]) -> dict[str, Any]:
    """The fields of the object artifacts handed over, a later artifact's over an earlier's."""
    return {key: value for a in artifacts if isinstance(a, Mapping) for key, value in a.items()}
