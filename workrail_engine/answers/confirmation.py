"""A person's confirmation of a step's answer: asking, and what a refusal answers.

Asked only once the answer has passed its checks, never for a replay; a reply other than approve
keeps the step waiting and is recorded (`AnswerStore.refuse`), an approval is kept with the
answer it let through.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..runs.secrets import SecretSet
    from .store import AnswerStore

__all__ = [
    "HUMAN_CONFIRMATION_ACTIONS",
    "REFUSAL_SUGGESTION",
    "Confirm",
    "ask_confirmation",
    "asks_a_person",
    "confirm_answer",
    "refusal_message",
]

# What a person may answer when asked to confirm a step: approve moves on; anything else keeps
# the step pending (declined / cancelled: the person closed the question without an answer).
HUMAN_CONFIRMATION_ACTIONS = ("approve", "reject", "declined", "cancelled")

Confirm = Callable[[Mapping[str, Any]], "Mapping[str, Any] | None"]
"""Asks a person to confirm a step: given ``{stepId, title, notes}``, returns the reply
``{action, comment?, by?}`` (``action`` one of `HUMAN_CONFIRMATION_ACTIONS`), or None when nobody
can be asked (the step then moves on as it would without a confirmation)."""

REFUSAL_SUGGESTION = "Address the comment, then answer the step again."


def asks_a_person(guidance: Mapping[str, Any]) -> bool:
    """A step whose confirmation is a person's: ``requireConfirmation`` true or ``human_approval``
    (a ``coordinator_eval`` confirmation is the coordinating agent's, not a person's)."""
    return bool(guidance.get("requiresConfirmation")) and guidance.get("confirmationKind") in (
        None,
        "human_approval",
    )


def ask_confirmation(
    guidance: Mapping[str, Any], step: Mapping[str, Any], notes: Any, confirm: Confirm | None
) -> dict[str, Any] | None:
    """The person's reply ``{action, comment, by, at}`` to the confirmation of ``step`` (a
    session's or a run's), asked once its answer passed the checks; None when the step needs no
    person's confirmation or nobody can be asked."""
    if confirm is None or not asks_a_person(guidance):
        return None
    reply = confirm(
        {"stepId": step["id"], "title": step.get("title") or step["id"], "notes": notes}
    )
    if reply is None:
        return None
    action = reply.get("action")
    comment = reply.get("comment")
    return {
        "action": action if action in HUMAN_CONFIRMATION_ACTIONS else "declined",
        "comment": comment if isinstance(comment, str) and comment else None,
        "by": str(reply.get("by") or "a person"),
        "at": time.time(),
    }


def confirm_answer(
    records: AnswerStore,
    run_id: str,
    step_key: str,
    guidance: Mapping[str, Any],
    shown: Mapping[str, Any],
    notes: Any,
    confirm: Confirm | None,
    masks: SecretSet,
) -> dict[str, Any] | None:
    """`ask_confirmation` for the step at ``step_key`` (``shown``: the step as the person sees
    it), the reply masked — every string a person or the client gave (a comment, a name) is
    masked as the notes are — and a refusal recorded."""
    reply: dict[str, Any] | None = masks.mask(ask_confirmation(guidance, shown, notes, confirm))
    if reply is not None and reply["action"] != "approve":
        records.refuse(run_id, step_key, shown["id"], reply)
    return reply


def refusal_message(confirmation: Mapping[str, Any]) -> str:
    """Why a step stays pending after a person's reply other than approve."""
    said = f": {confirmation['comment']}" if confirmation.get("comment") else ""
    if confirmation["action"] == "reject":
        return f"the step was rejected by {confirmation['by']}{said}"
    return (
        f"the confirmation was {confirmation['action']} by {confirmation['by']}; "
        "the step waits for it"
    )
