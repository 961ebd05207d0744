"""A session's prompt steps answered by a model the front end can reach (opt-in, bounded).

`answer_with_model` takes a session's current step and, while the next step may be given to the
model, asks it (the step's prompt and guidance, a system text saying what the engine checks),
hands its reply to `SessionService.answer` — the same checks as any answer — and moves on. A reply
that fails a check is sent back once with the problems (``retries_per_step``); if it fails again,
the step waits for the agent as it would have. It stops at a step that opts out (``"sampling":
false`` on the workflow or the step), at a step whose confirmation is a person's when no person
can be asked, when the model gives no reply, and at the run's limits: calls and tokens. Tokens are
counted as each request's ``maxTokens`` (the most the reply may cost: the reply itself does not
say what it used), and a call is not made if its ``maxTokens`` would pass the run's bound.

The usage of a run is kept in the store with each answer the model gave (``model_usage``: calls
and tokens so far), so it survives restarts and shows with the run; calls whose answers were sent
back are counted by the caller's ``ledger`` (one per server process) until the next answer
records them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..definition.steps import find_step

if TYPE_CHECKING:  # the server reads ModelLimits at start, before any session is served
    from .service import Confirm, SessionService, SessionStep

__all__ = ["AskModel", "ModelLimits", "ModelUsage", "answer_with_model", "model_may_answer"]

AskModel = Callable[[Mapping[str, Any]], "Mapping[str, Any] | None"]
"""Asks the model: given ``{system, prompt, maxTokens}``, returns ``{text, model}``, or None when
the model could not be asked or declined."""

SYSTEM_TEXT = (
    "You are doing one step of a WorkRail workflow. Answer with the notes of the step: what you "
    "did, found and decided, in Markdown. Your answer is checked against the step's validation "
    "criteria before the workflow moves on; when it is sent back, fix what the problems say."
)


@dataclass(frozen=True)
class ModelLimits:
    """Bounds of what a run may ask of a model (the server's settings)."""

    calls_per_run: int = 20
    tokens_per_run: int = 40_000
    max_tokens: int = 2_000  # each request's, unless the step says otherwise
    retries_per_step: int = 1


@dataclass
class ModelUsage:
    calls: int = 0
    tokens: int = 0
    stopped: str | None = None  # why the model stopped answering, when it did

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "tokens": self.tokens, "stopped": self.stopped}


def model_may_answer(definition: Mapping[str, Any], step: Mapping[str, Any]) -> bool:
    """Unless the workflow or the step says ``"sampling": false``."""
    return definition.get("sampling") is not False and step.get("sampling") is not False


def _max_tokens(step: Mapping[str, Any], limits: ModelLimits) -> int:
    setting = step.get("sampling")
    if isinstance(setting, Mapping) and isinstance(setting.get("maxTokens"), int):
        return int(setting["maxTokens"])
    return limits.max_tokens


def _request(step: SessionStep, max_tokens: int, problems: list[str]) -> dict[str, Any]:
    pending = step.pending or {}
    guidance = step.next.get("guidance") or {}
    parts = [f"# {pending.get('title', '')}", str(pending.get("prompt") or "")]
    criteria = guidance.get("validationCriteria")
    if criteria:
        parts.append(f"Validation criteria: {criteria}")
    if problems:
        parts.append("Your last answer was sent back:\n" + "\n".join(f"- {p}" for p in problems))
    return {"system": SYSTEM_TEXT, "prompt": "\n\n".join(parts), "maxTokens": max_tokens}


def usage_of(service: SessionService, run_id: str) -> ModelUsage:
    """The run's usage so far, from the last answer the model gave (zero when none)."""
    for answer in reversed(service.store.answers(run_id)):
        recorded = (answer.response or {}).get("model_usage")
        if recorded:
            return ModelUsage(int(recorded["calls"]), int(recorded["tokens"]))
    return ModelUsage()


def answer_with_model(
    service: SessionService,
    step: SessionStep,
    ask: AskModel,
    limits: ModelLimits,
    confirm: Confirm | None = None,
    ledger: dict[str, ModelUsage] | None = None,
) -> tuple[SessionStep, ModelUsage]:
    """Let the model answer from ``step`` on; the session's step where it stopped, and the usage.

    ``ledger``: the usage of runs by id, kept by the caller between calls (read, then updated)."""
    from .service import asks_a_person  # loaded already: ``service`` is one of its objects

    known = (ledger or {}).get(step.run_id)
    usage = ModelUsage(known.calls, known.tokens) if known else usage_of(service, step.run_id)
    if ledger is not None:
        ledger[step.run_id] = usage
    while step.status == "waiting" and step.pending is not None:
        definition = service.store.pinned(step.workflow_hash)
        found = find_step(definition, step.pending["stepId"], step.workflow_id)
        guidance = step.next.get("guidance") or {}
        if not model_may_answer(definition, found):
            usage.stopped = f"step {found['id']!r} is kept for the agent (sampling: false)"
            break
        if asks_a_person(guidance) and confirm is None:
            usage.stopped = f"step {found['id']!r} needs a person's confirmation"
            break
        moved = _one_step(service, step, found, ask, limits, usage, confirm)
        if moved is None:
            break
        step = moved
    return step, usage


def _one_step(
    service: SessionService,
    step: SessionStep,
    found: Mapping[str, Any],
    ask: AskModel,
    limits: ModelLimits,
    usage: ModelUsage,
    confirm: Confirm | None,
) -> SessionStep | None:
    """The step after the model's accepted answer; None when the agent must take over."""
    problems: list[str] = []
    budget = _max_tokens(found, limits)
    for _ in range(1 + limits.retries_per_step):
        if usage.calls >= limits.calls_per_run or usage.tokens + budget > limits.tokens_per_run:
            usage.stopped = (
                f"the run's limit ({limits.calls_per_run} calls, {limits.tokens_per_run} tokens)"
            )
            return None
        reply = ask(_request(step, budget, problems))
        usage.calls += 1
        usage.tokens += budget
        if reply is None or not str(reply.get("text") or "").strip():
            usage.stopped = "the model gave no answer"
            return None
        answered = service.answer(
            step.run_id,
            step.attempt,
            notes=str(reply["text"]),
            confirm=confirm,
            model_usage=usage.to_dict() | {"model": reply.get("model")},
        )
        if answered.outcome != "blocked":
            return answered
        problems = answered.issues or [p["message"] for p in answered.problems]
    usage.stopped = f"step {found['id']!r}: the model's answers failed its checks"
    return None
