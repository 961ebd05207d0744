"""A run's prompt steps answered by a model the front end can reach (``--sampling``).

The loop is `workrail_engine.answers.model_loop.answer_with_model` (the same request, checks,
send-back, opt-outs and limits for runs and sessions); here only how a run is seen by it: the
step it waits on (``waiting``) and the agent's answer path (`RunService.continue_run`, which
checks the answer, asks a person to confirm it where the step wants that, and lets the run go
on until it waits again, ends, or ``wait_seconds`` pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..answers.confirmation import Confirm
from ..answers.model_loop import (
    AskModel,
    ModelLimits,
    ModelUsage,
    StepForModel,
    answer_with_model,
)
from ..definition.steps import find_step
from ..result_shapes import RunResult
from .service import RunService

__all__ = ["RunForModel", "answer_run_with_model"]


class RunForModel:
    """A run as the model's loop sees it; ``state`` is the run's state after the loop."""

    def __init__(
        self,
        service: RunService,
        state: RunResult,
        confirm: Confirm | None,
        wait_seconds: float,
    ) -> None:
        self.service, self.state = service, state
        self.confirm, self.wait_seconds = confirm, wait_seconds

    @property
    def run_id(self) -> str:
        return str(self.state["workflow_id"])

    def waiting(self) -> StepForModel | None:
        waiting = self.state.get("waiting")
        if self.state.get("status") != "waiting" or not waiting:
            return None
        definition = self.service.workflow_of(self.run_id)
        shown = waiting.get("step") or {}
        guidance = waiting.get("guidance") or {}
        return StepForModel(
            step=find_step(definition, shown["id"]),
            definition=definition,
            title=str(shown.get("title") or shown["id"]),
            prompt=str(guidance.get("prompt") or shown.get("prompt") or ""),
            guidance=guidance,
        )

    def answer(
        self, notes: str, context: Mapping[str, Any], usage: Mapping[str, Any]
    ) -> list[str] | None:
        after = self.service.continue_run(
            self.run_id,
            notes,
            context=dict(context),
            wait_seconds=self.wait_seconds,
            step_key=self.state["waiting"]["step_key"],
            confirm=self.confirm,
            model_usage=usage,
        )
        if after.get("outcome") == "blocked":
            return list(after.get("issues") or ["the answer was sent back"])
        self.state = after
        return None


def answer_run_with_model(
    service: RunService,
    state: RunResult,
    ask: AskModel,
    limits: ModelLimits,
    *,
    confirm: Confirm | None = None,
    wait_seconds: float = 30.0,
) -> tuple[RunResult, ModelUsage]:
    """Let the model answer the run's prompt steps from the one ``state`` waits on: the run's
    state where the model stopped, and the run's usage (with why it stopped)."""
    target = RunForModel(service, state, confirm, wait_seconds)
    usage = answer_with_model(
        target, service.sessions.store, ask, limits, can_confirm=confirm is not None
    )
    if usage.stopped is None and target.state.get("status") == "running":
        usage.stopped = (
            "the run was still running when the wait ended; a prompt step it reaches later "
            "waits for the agent"
        )
    return target.state, usage
