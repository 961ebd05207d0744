"""Prompt steps answered by a model the front end can reach (opt-in, bounded): sessions and runs.

`answer_with_model` takes whatever waits for an answer — a session
(`workrail_engine.sessions.model_answers`) or a run (`workrail_engine.runs.model_answers`) — and,
while the step it waits on may be given to the model, asks it (the step's prompt and guidance, a system text saying what the engine checks),
hands its reply to the same answer path as the agent's — the same checks, the same confirmation —
and moves on. A step that declares the context variables it sets asks the model for them in a
block of its reply (`model_reply`), checked as the agent's ``context``. A reply that fails a check is sent back once with the problems
(``retries_per_step``); if it fails again, the step waits for the agent as it would have. It
stops at a step that opts out (``"sampling": false`` on the workflow or the step), at a step whose
confirmation is a person's when no person can be asked, when the model gives no reply, and at the
run's limits: calls and tokens. Tokens are counted as each request's ``maxTokens`` (the most the
reply may cost: the reply itself does not say what it used), and a call is not made if its
``maxTokens`` would pass the run's bound.

Every call is counted in the store before it is made (`SessionStore.count_model_call`), so the
usage of a run — answers sent back included — survives restarts and shows with the run; each
answer the model gave also carries the usage so far (``model_usage``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .confirmation import asks_a_person
from .model_reply import context_instruction, read_reply

if TYPE_CHECKING:  # the MCP server reads ModelLimits at start, before any store is opened
    from .store import AnswerStore

__all__ = [
    "AskModel",
    "ModelLimits",
    "ModelUsage",
    "StepForModel",
    "WaitsForAnswer",
    "answer_with_model",
    "model_may_answer",
    "usage_of",
]

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


@dataclass(frozen=True)
class StepForModel:
    """The step something waits on, as the model is asked to do it."""

    step: Mapping[str, Any]  # the workflow's step (its ``sampling`` setting)
    definition: Mapping[str, Any]  # the workflow (its ``sampling`` setting)
    title: str
    prompt: str  # the step's prompt with its guidance, as the agent would read it
    guidance: Mapping[str, Any]  # the next-step guidance (criteria, confirmation)


class WaitsForAnswer(Protocol):
    """A session or a run, seen by the model's loop."""

    @property
    def run_id(self) -> str: ...

    def waiting(self) -> StepForModel | None:
        """The step waiting for an answer now; None when nothing waits."""

    def answer(
        self, notes: str, context: Mapping[str, Any], usage: Mapping[str, Any]
    ) -> list[str] | None:
        """Apply the model's answer (its notes, the context it sets: `model_reply`) through the
        agent's path: None when accepted, else the problems it was sent back with (checks
        failed, or a person refused it)."""


def model_may_answer(definition: Mapping[str, Any], step: Mapping[str, Any]) -> bool:
    """Unless the workflow or the step says ``"sampling": false``."""
    return definition.get("sampling") is not False and step.get("sampling") is not False


def _max_tokens(step: Mapping[str, Any], limits: ModelLimits) -> int:
    setting = step.get("sampling")
    if isinstance(setting, Mapping) and isinstance(setting.get("maxTokens"), int):
        return int(setting["maxTokens"])
    return limits.max_tokens


def _request(turn: StepForModel, max_tokens: int, problems: list[str]) -> dict[str, Any]:
    parts = [f"# {turn.title}", turn.prompt]
    criteria = turn.guidance.get("validationCriteria")
    if criteria:
        parts.append(f"Validation criteria: {criteria}")
    parts.append(context_instruction(turn.definition, turn.step))
    if problems:
        parts.append("Your last answer was sent back:\n" + "\n".join(f"- {p}" for p in problems))
    prompt = "\n\n".join(part for part in parts if part)
    return {"system": SYSTEM_TEXT, "prompt": prompt, "maxTokens": max_tokens}


def usage_of(store: AnswerStore, run_id: str) -> ModelUsage:
    """The run's usage so far: every call counted (zero when none)."""
    counted = store.model_usage(run_id)
    return ModelUsage() if counted is None else ModelUsage(*counted)


def answer_with_model(
    target: WaitsForAnswer,
    store: AnswerStore,
    ask: AskModel,
    limits: ModelLimits,
    *,
    can_confirm: bool,
) -> ModelUsage:
    """Let the model answer ``target``'s steps from the one waiting now; the usage, with why it
    stopped. ``can_confirm``: a person can be asked to confirm a step (else such a step stops
    the model)."""
    usage = usage_of(store, target.run_id)
    turn = target.waiting()
    while turn is not None:
        if not model_may_answer(turn.definition, turn.step):
            usage.stopped = f"step {turn.step['id']!r} is kept for the agent (sampling: false)"
            break
        if asks_a_person(turn.guidance) and not can_confirm:
            usage.stopped = f"step {turn.step['id']!r} needs a person's confirmation"
            break
        if not _one_step(target, store, turn, ask, limits, usage):
            break
        turn = target.waiting()
    return usage


def _one_step(
    target: WaitsForAnswer,
    store: AnswerStore,
    turn: StepForModel,
    ask: AskModel,
    limits: ModelLimits,
    usage: ModelUsage,
) -> bool:
    """Whether the model's answer was accepted (else the agent must take over)."""
    problems: list[str] = []
    budget = _max_tokens(turn.step, limits)
    for _ in range(1 + limits.retries_per_step):
        if usage.calls >= limits.calls_per_run or usage.tokens + budget > limits.tokens_per_run:
            usage.stopped = (
                f"the run's limit ({limits.calls_per_run} calls, {limits.tokens_per_run} tokens)"
            )
            return False
        # Counted before asking: a call whose answer is lost (or sent back) still counts.
        usage.calls, usage.tokens = store.count_model_call(target.run_id, budget)
        reply = ask(_request(turn, budget, problems))
        if reply is None or not str(reply.get("text") or "").strip():
            usage.stopped = "the model gave no answer"
            return False
        answer = read_reply(turn.definition, turn.step, str(reply["text"]))
        if answer.problems:
            problems = answer.problems
            continue
        sent_back = target.answer(
            answer.notes,
            answer.context,
            {"calls": usage.calls, "tokens": usage.tokens, "model": reply.get("model")},
        )
        if sent_back is None:
            return True
        problems = sent_back
    usage.stopped = f"step {turn.step['id']!r}: the model's answers failed its checks"
    return False
