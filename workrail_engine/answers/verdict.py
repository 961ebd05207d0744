"""What an answer to a waiting step comes to, before it is recorded: the one chain every answer
passes — the step's checks (`step_checks.check_answer`), then the person's confirmation where the
step asks for one.

A run and a session both call `judge`; what follows acceptance (a session moves to its next step
in one transaction; a run's answer is sent to the durable workflow) is each service's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..evaluation.step_checks import AnswerCheck, check_answer
from ..runs.secrets import SecretSet
from .blockers import Blocked, blocked_by_checks, blocked_by_refusal
from .confirmation import Confirm, confirm_answer
from .record import MaskedAnswer
from .store import AnswerStore

__all__ = ["Verdict", "checked_answer", "judge"]


@dataclass
class Verdict:
    """``blocked``: why the step stays waiting (a check failed, or a person refused), else None;
    ``confirmation``: the person's reply, when one was asked; ``assessments``: the ratings an
    accepted answer records (`ArtifactCheck.assessments`)."""

    blocked: Blocked | None = None
    confirmation: dict[str, Any] | None = None
    assessments: list[dict[str, Any]] = field(default_factory=list)


def judge(
    records: AnswerStore,
    run_id: str,
    step_key: str,
    answer: MaskedAnswer,
    *,
    definition: Mapping[str, Any],
    step: Mapping[str, Any],
    shown: Mapping[str, Any],
    guidance: Mapping[str, Any],
    context: Mapping[str, Any],
    require_notes: bool,
    confirm: Confirm | None,
    masks: SecretSet,
) -> Verdict:
    """``answer`` to ``step`` (``shown``: the step as served, its title; ``guidance``: the step's
        next-step guidance) checked, then confirmed by a person where the step wants that; a refusal
        is recorded. ``context`` is what criteria conditions see; the answer's own context is checked
    against the workflow's declared ``context``."""
    checked, blocked = checked_answer(
        definition, step, answer, context, require_notes=require_notes
    )
    if blocked is not None:
        return Verdict(blocked)
    confirmation = confirm_answer(
        records, run_id, step_key, guidance, shown, answer.output, confirm, masks
    )
    if confirmation is not None and confirmation["action"] != "approve":
        refused = blocked_by_refusal(confirmation, shown["id"], answer.output, answer.artifacts)
        return Verdict(refused, confirmation)
    return Verdict(None, confirmation, checked.artifacts.assessments)


def checked_answer(
    definition: Mapping[str, Any],
    step: Mapping[str, Any],
    answer: MaskedAnswer,
    context: Mapping[str, Any],
    *,
    require_notes: bool,
) -> tuple[AnswerCheck, Blocked | None]:
    """``answer``'s checks against ``step`` (no person asked, nothing recorded), and why they
    send it back (None: it passes) — what `judge` asks first, and replay asks of a recorded
    answer against the step as it is now."""
    checked = check_answer(
        definition,
        step,
        answer.output,
        answer.artifacts,
        context,
        require_notes=require_notes,
        answer_context=answer.context,
    )
    blocked = blocked_by_checks(
        checked,
        definition,
        step,
        answer.output,
        answer.artifacts,
        context,
        require_notes=require_notes,
        answer_context=answer.context,
    )
    return checked, blocked
