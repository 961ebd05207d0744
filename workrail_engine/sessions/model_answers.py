"""A session's prompt steps answered by a model the front end can reach (``--sampling``).

The loop is `workrail_engine.answers.model_loop.answer_with_model` (the same request, checks,
send-back, opt-outs and limits for runs and sessions); here only how a session is seen by it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..answers.model_loop import StepForModel
from ..definition.steps import find_step

if TYPE_CHECKING:
    from ..answers.confirmation import Confirm
    from .service import SessionService, SessionStep

__all__ = ["SessionForModel"]


class SessionForModel:
    """A session as the model's loop sees it; ``step`` is where it stands after the loop."""

    def __init__(self, service: SessionService, step: SessionStep, confirm: Confirm | None):
        self.service, self.step, self.confirm = service, step, confirm

    @property
    def run_id(self) -> str:
        return self.step.run_id

    def waiting(self) -> StepForModel | None:
        pending = self.step.pending
        if self.step.status != "waiting" or pending is None:
            return None
        definition = self.service.store.pinned(self.step.workflow_hash)
        return StepForModel(
            step=find_step(definition, pending["stepId"], self.step.workflow_id),
            definition=definition,
            title=str(pending.get("title") or ""),
            prompt=str(pending.get("prompt") or ""),
            guidance=self.step.next.get("guidance") or {},
        )

    def answer(
        self, notes: str, context: Mapping[str, Any], usage: Mapping[str, Any]
    ) -> list[str] | None:
        answered = self.service.answer(
            self.step.run_id,
            self.step.attempt,
            notes=notes,
            context=context,
            confirm=self.confirm,
            model_usage=usage,
        )
        if answered.outcome == "blocked":
            return answered.issues or [p["message"] for p in answered.problems]
        self.step = answered
        return None
