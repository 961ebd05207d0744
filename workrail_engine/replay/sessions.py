"""Replay of a recorded session: the navigator walked again from the session's start context, each
recorded answer checked against the step as it is now and applied as the session applies it
(`sessions.position`), until the walk and the history part or the history ends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..answers.blockers import Blocked
from ..answers.record import MaskedAnswer
from ..answers.verdict import checked_answer
from ..errors import EngineError
from ..serving.navigator import next_step
from ..sessions.position import answer_context, moved_state
from .divergence import Divergence, Shape, blocked, diverged
from .history import History
from .records import LACKS

__all__ = ["replay_session"]


def _served(found: Mapping[str, Any]) -> str | None:
    step = found.get("step")
    return None if found.get("isComplete") or not step else str(step["id"])


def _blocking(refused: Blocked | None, *, artifacts_known: bool) -> list[str]:
    """Why the checks would send the recorded answer back; of a history that did not record
    its answers' artifacts, only what its notes and context decide (its artifacts are unknown,
    not missing)."""
    if refused is None:
        return []
    if artifacts_known:
        return list(refused.issues)
    return [
        p["message"] for p in refused.problems if p.get("kind") in ("notes", "criteria", "context")
    ]


def replay_session(
    definition: Mapping[str, Any], history: History
) -> tuple[int, Divergence | None]:
    """(answers replayed, the first divergence or None)."""
    shape = Shape(definition)
    artifacts_known = LACKS["answer_given"] not in history.lacks
    replayed = 0
    at = "the start"
    try:
        start = history.start.get("context") or {}
        found = next_step(definition, [], start, rendered=False).to_dict()
        state: dict[str, Any] = {"completed": [], "context": found["context"], "outputs": {}}
        for recorded in history.steps:
            at = f"attempt {recorded.key}"
            served = _served(found)
            if served != recorded.step_id:
                reached = (recorded.loop or {}).get("iteration")
                return replayed, diverged(
                    shape,
                    at,
                    recorded.step_id,
                    served,
                    reached if isinstance(reached, int) else None,
                )
            given = recorded.answer or {}
            answer = MaskedAnswer(
                given.get("output"),
                list(given.get("artifacts") or []),
                given.get("context") or {},
                "",
            )
            ctx = answer_context(state, answer.context)
            _, refused = checked_answer(
                definition, shape.steps[served], answer, ctx, require_notes=True
            )
            issues = _blocking(refused, artifacts_known=artifacts_known)
            if issues:
                return replayed, blocked(at, served, issues)
            found, state = moved_state(
                definition,
                state,
                found,
                served,
                answer.output,
                answer.artifacts,
                ctx,
                rendered=False,
            )
            if found.get("blocked"):
                if not artifacts_known:
                    return replayed, None  # decided by artifacts not recorded: as far as it goes
                return replayed, blocked(at, served, list(found["blocked"].get("issues") or []))
            replayed += 1
    except EngineError as error:
        return replayed, Divergence(
            "step", at, f"the workflow now fails at {at}: {error.message}", None, None, None, None
        )
    expected = history.end.get("pending_step")
    if history.end.get("status") not in ("success", "waiting") and expected is None:
        return replayed, None  # cancelled where it stood: nothing more to compare
    served = _served(found)
    if served != expected:
        return replayed, diverged(shape, "after the last answer", expected, served)
    return replayed, None
