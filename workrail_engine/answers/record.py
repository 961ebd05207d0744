"""An answer as it is recorded: masked, its digest, and the answer recorded before it.

Every answer — a run's or a session's, the agent's or the client's model's — is masked (the
workflow's declared secrets, read from this process's environment) before anything reads it, and
its digest (`answer_digest`) is what makes a resent answer a replay rather than a second answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..definition.declared import declared_secrets
from ..errors import InvalidRunState
from ..result_shapes import RunResult
from ..runs.secrets import SecretSet
from .store import Answer, AnswerStore, confirmations_of

__all__ = [
    "AnswerNotApplied",
    "MaskedAnswer",
    "answer_digest",
    "answer_facts",
    "earlier_answer",
    "masked_answer",
    "masks_of",
    "with_history",
]


class AnswerNotApplied(InvalidRunState):
    """Another answer to the same step was applied first; this one was not. ``data.state`` is
    the session's (or run's) state now."""


def masks_of(definition: Mapping[str, Any]) -> SecretSet:
    """The masks of a workflow's declared secrets, read from this process's environment."""
    return SecretSet.from_environment(declared_secrets(definition))


def answer_digest(output: Any, artifacts: Any, context: Any) -> str:
    """What makes two answers the same answer (a replay), whatever their key order."""
    text = json.dumps(
        [output, artifacts or [], context or {}], sort_keys=True, ensure_ascii=False, default=str
    )
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class MaskedAnswer:
    """An answer as it is checked and stored: every string masked."""

    output: str | None
    artifacts: list[Any]
    context: dict[str, Any]
    digest: str

    def recorded(self) -> dict[str, Any]:
        """What of the answer its row keeps besides the output (`Answer.given`): the output is
        kept once, as a session's notes or in the message sent to a run."""
        return {"artifacts": self.artifacts, "context": self.context}


def masked_answer(
    masks: SecretSet,
    output: str | None,
    artifacts: Sequence[Any] | None,
    context: Mapping[str, Any] | None,
) -> MaskedAnswer:
    masked_output, masked_artifacts, masked_context = masks.mask(
        [output, list(artifacts or []), dict(context or {})]
    )
    return MaskedAnswer(
        masked_output,
        masked_artifacts,
        masked_context,
        answer_digest(masked_output, masked_artifacts, masked_context),
    )


def earlier_answer(
    records: AnswerStore,
    run_id: str,
    step_key: str | None,
    digest: str,
    *,
    last_key: str | None = None,
    resent_last: bool = False,
) -> Answer | None:
    """The answer recorded for ``step_key`` (this very one when its digest is ``digest``, else
    another that was applied first), or None when the step has none. ``resent_last``: the caller
    named no step, so an answer equal to the last one recorded (``last_key``'s, or the latest)
    is that answer resent after a lost reply."""
    recorded = records.answer(run_id, step_key) if step_key else None
    if recorded is None and resent_last:
        if last_key is not None:
            last = records.answer(run_id, last_key)
        else:
            answers = records.answers(run_id)
            last = answers[-1] if answers else None
        if last is not None and last.digest == digest:
            return last
    return recorded


def answer_facts(answer: Answer, refusals: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What a step's result shows of its answer besides the output: the person's approval, every
    reply to its confirmation, and the model's usage when the client's model gave it."""
    recorded = answer.response or {}
    facts: dict[str, Any] = {
        "confirmation": recorded.get("confirmation"),
        "model_usage": recorded.get("model_usage"),
    }
    replies = confirmations_of(refusals, answer.step_key, recorded.get("confirmation"))
    if replies:
        facts["confirmations"] = replies
    return facts


def with_history(
    snap: RunResult, records: AnswerStore, refusals: Sequence[Mapping[str, Any]]
) -> RunResult:
    """A run-shaped ``snap`` (a session's or a run's) with what a person and a model did that
    its step results do not hold: the refusals of the waiting step, and the model's usage."""
    waiting = snap.get("waiting")
    if waiting:
        replies = confirmations_of(refusals, waiting["step_key"], None)
        if replies:
            waiting["confirmations"] = replies
    usage = records.model_usage(snap["workflow_id"])
    if usage is not None:
        snap["sampling"] = {"calls": usage[0], "tokens": usage[1]}
    return snap
