"""Why an answer was sent back, in one shape for runs and sessions.

Each problem is one entry of ``problems`` (``{kind, message}``; kind notes | criteria | artifacts
| followup | confirmation); ``issues`` are their messages — an assessment's follow-up included —
and ``suggestions`` what to send instead. The front ends phrase it: the session tools as
upstream's blockers, the run tools with ``follow_ups`` besides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..evaluation.step_checks import AnswerCheck
from .confirmation import REFUSAL_SUGGESTION, refusal_message

__all__ = ["Blocked", "blocked_by_checks", "blocked_by_refusal"]


@dataclass
class Blocked:
    problems: list[dict[str, Any]] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)


def blocked_by_checks(checked: AnswerCheck) -> Blocked | None:
    """The problems of an answer that failed its step's checks; None when it passed."""
    if checked.valid:
        return None
    return Blocked(
        [dict(p) for p in checked.problems],
        checked.issues + checked.followups,
        list(checked.suggestions),
    )


def blocked_by_refusal(confirmation: Mapping[str, Any]) -> Blocked:
    """A person rejected the answer (or closed the question): the step stays pending."""
    message = refusal_message(confirmation)
    return Blocked([{"kind": "confirmation", "message": message}], [message], [REFUSAL_SUGGESTION])
