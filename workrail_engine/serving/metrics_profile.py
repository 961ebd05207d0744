"""Upstream 3.x ``metricsProfile``: the metrics an agent is asked to report, added to the end of a
step's prompt when it is rendered (not by the compile step), as upstream's renderer does.

- absent or ``none``: nothing;
- ``coding``: every step asks for the commit SHAs of the session so far (the whole list each
  time: the context is merged key by key, so a partial list would replace the earlier one); the
  last step also asks for the outcome, the pull request numbers and the size of the change;
- ``review``: the last step asks for the pull request numbers reviewed and the outcome;
- ``research``, ``design``, ``ticket``: the last step asks for the outcome.

The last step is the last top-level step, or, when that is a loop with an inline body, the last
body step that is not the loop's control step (its output is the loop decision, not the work).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..evaluation.contract_refs import LOOP_CONTROL

__all__ = ["metrics_footer"]


_OUTCOME = (
    '`metrics_outcome`: exactly one of "success", "partial", "abandoned" or "error" (classify how '
    "the work ended; no other value counts)"
)
_PR_NUMBERS = (
    "`metrics_pr_numbers`: the pull request numbers{what}, as a list of integers (not URLs)"
)

_EVERY_CODING_STEP = (
    "**Metrics:** this workflow records its commits. Whenever you move on after committing, set "
    "`metrics_commit_shas` in the context to the SHAs of every commit made in this session so "
    "far, the earlier ones included: the context is merged key by key, so a list holding only "
    "the new SHAs would replace the earlier ones."
)

_FINAL = "**Metrics, last step:** when you finish, also set in the context:"

_LAST_STEP_FIELDS: dict[str, list[str]] = {
    "coding": [
        _OUTCOME,
        _PR_NUMBERS.format(what=" opened or updated"),
        "`metrics_files_changed`, `metrics_lines_added`, `metrics_lines_removed`: integers",
    ],
    "review": [_PR_NUMBERS.format(what=" reviewed"), _OUTCOME],
    "research": [_OUTCOME],
    "design": [_OUTCOME],
    "ticket": [_OUTCOME],
}


def metrics_footer(workflow: Mapping[str, Any], step_id: Any) -> str:
    """The text ``metricsProfile`` adds to the prompt of step ``step_id``; "" when none."""
    profile = workflow.get("metricsProfile")
    if not isinstance(profile, str) or profile not in _LAST_STEP_FIELDS:
        return ""
    parts = [_EVERY_CODING_STEP] if profile == "coding" else []
    if step_id is not None and step_id == _last_step_id(workflow):
        parts.append("\n".join([_FINAL, *(f"- {line}" for line in _LAST_STEP_FIELDS[profile])]))
    return "\n\n".join(parts)


def _last_step_id(workflow: Mapping[str, Any]) -> Any:
    steps = workflow.get("steps")
    if not isinstance(steps, list) or not steps or not isinstance(steps[-1], Mapping):
        return None
    last = steps[-1]
    body = last.get("body")
    if last.get("type") == "loop" and isinstance(body, list):
        work = [
            s
            for s in body
            if isinstance(s, Mapping)
            and not (
                isinstance(s.get("outputContract"), Mapping)
                and s["outputContract"].get("contractRef") == LOOP_CONTROL
            )
        ]
        return work[-1].get("id") if work else None
    return last.get("id")
