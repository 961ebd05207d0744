"""Why an answer was sent back, and what to send instead: one shape for runs and sessions.

`Blocked` holds each problem twice over. ``problems`` (``{kind, message}``; kind notes | criteria
| artifacts | followup | confirmation), ``issues`` (their messages, an assessment's follow-up
included) and ``suggestions`` are the engine's own words. ``blockers`` are the same problems with
upstream WorkRail 3.x's codes and pointers (one blocker per source, not per failed rule):

- notes missing: ``MISSING_REQUIRED_NOTES``, pointer ``{kind: workflow_step, stepId}``;
- the validation criteria failed: one ``INVALID_REQUIRED_OUTPUT`` (``MISSING_REQUIRED_OUTPUT``
  when there were no notes to check), pointer ``{kind: output_contract, contractRef:
  "wr.validationCriteria"}``, its issues in ``validation``;
- the output contract's artifact missing: ``MISSING_REQUIRED_OUTPUT``; there but invalid:
  ``INVALID_REQUIRED_OUTPUT`` (issues in ``validation``) — pointer ``{kind: output_contract,
  contractRef}``;
- an assessment missing or invalid: ``INVALID_REQUIRED_OUTPUT``, ``contractRef
  "wr.contracts.assessment"``;
- a rating that fires a follow-up: ``ASSESSMENT_FOLLOWUP_REQUIRED`` per dimension, pointer
  ``{kind: assessment_dimension, assessmentId, dimensionId}``, and ``assessment_followup {title,
  guidance}``;
- a person's refusal: ``USER_ONLY_DEPENDENCY``, pointer ``{kind: workflow_step, stepId}``;
- a context variable the answer set that its declaration in the workflow's ``context`` refuses:
  ``INVALID_REQUIRED_OUTPUT`` per variable, pointer ``{kind: workflow_step, stepId}`` (upstream's
  closed set has no pointer to a context variable), the allowed values in ``suggestedFix``; one
  of the step's ``sets`` that must be set and is left out: ``MISSING_REQUIRED_OUTPUT``, the same.

``retry`` is the answer to send instead: the notes and artifacts given, changed as little as the
checks ask (the missing word added, the contract's artifact, each assessment rated with an allowed
level that fires no follow-up), and checked again here — it is offered only when it passes every
check. A value of a declared context variable cannot be picked for the agent: when one is wrong
or missing, ``retry`` also holds ``context`` (the answer's values, each wrong or missing one a
placeholder saying what it must be) and ``fill`` (each placeholder's variable → its declared
schema): an answer to complete, not to send as it is. The front ends phrase it as their tool's
call; the engine names no tool.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..evaluation.contracts import ASSESSMENT_KIND, CONTRACTS, step_assessments
from ..evaluation.step_checks import AnswerCheck, check_answer, context_wanted, notes_required
from ..limits import MAX_ANSWER_CHARS
from .confirmation import REFUSAL_SUGGESTION, refusal_message

__all__ = [
    "ASSESSMENT_CONTRACT_REF",
    "MAX_BLOCKERS",
    "MAX_BLOCKER_MESSAGE_CHARS",
    "MAX_BLOCKER_FIX_CHARS",
    "MAX_FILL_CHARS",
    "RETRY_NOTES",
    "VALIDATION_CRITERIA_REF",
    "Blocked",
    "blocked_by_artifacts",
    "blocked_by_checks",
    "blocked_by_refusal",
]

VALIDATION_CRITERIA_REF = "wr.validationCriteria"  # upstream's contractRef for the criteria
ASSESSMENT_CONTRACT_REF = "wr.contracts.assessment"  # and for a step's assessments
MAX_BLOCKERS = 10  # upstream's bound on the blockers of one answer
MAX_BLOCKER_MESSAGE_CHARS = 500  # each blocker's message (upstream: 512 bytes)
MAX_BLOCKER_FIX_CHARS = 1000  # each blocker's suggestedFix (upstream: 1024 bytes)
# A retry's placeholder for a context value, and the declared schema `fill` repeats for it (as
# JSON): each blocker carries the retry, so a workflow's huge enum is not sent ten times over.
MAX_FILL_CHARS = 2000
# The notes a retry offers when the answer had none: the smallest a step asking notes takes.
RETRY_NOTES = "Notes: what I did, what I found, and what I decided."
_NO_METACHARACTERS = re.compile(r"[\w \-:,'\"#/]+")


@dataclass
class Blocked:
    problems: list[dict[str, Any]] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    # {code, pointer, message, suggestedFix}, sorted as upstream sorts them
    blockers: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, list[str]] | None = None  # {issues, suggestions}
    assessment_followup: dict[str, str] | None = None  # {title, guidance}
    # {notes, artifacts}: an answer that passes; with {context, fill} when a context value is
    # wanted (placeholders to fill)
    retry: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "problems": self.problems,
            "issues": self.issues,
            "suggestions": self.suggestions,
            "blockers": self.blockers,
            "validation": self.validation,
            "assessment_followup": self.assessment_followup,
            "retry": self.retry,
        }


def _blocker(
    code: str, pointer: dict[str, Any], message: str, fix: Sequence[str]
) -> dict[str, Any]:
    blocker = {"code": code, "pointer": pointer, "message": message[:MAX_BLOCKER_MESSAGE_CHARS]}
    if fix:
        blocker["suggestedFix"] = " ".join(fix)[:MAX_BLOCKER_FIX_CHARS]
    return blocker


def _sort_key(blocker: Mapping[str, Any]) -> str:
    """Upstream's order: code, pointer kind, then the pointer's id."""
    pointer = blocker["pointer"]
    where = pointer.get("contractRef") or pointer.get("stepId") or ""
    if pointer["kind"] == "assessment_dimension":
        where = f"{pointer['assessmentId']}|{pointer['dimensionId']}"
    return f"{blocker['code']}|{pointer['kind']}|{where}"


def blocked_by_checks(
    checked: AnswerCheck,
    definition: Mapping[str, Any],
    step: Mapping[str, Any],
    notes: str | None,
    artifacts: Sequence[Any],
    context: Mapping[str, Any],
    *,
    require_notes: bool,
    answer_context: Mapping[str, Any] | None = None,
) -> Blocked | None:
    """What an answer (``notes``, ``artifacts``, the context it sets: ``answer_context``) that
    failed ``step``'s checks is sent back with; None when it passed."""
    if checked.valid:
        return None
    on_step = {"kind": "workflow_step", "stepId": str(step.get("id"))}
    blockers: list[dict[str, Any]] = []
    invalid: list[str] = []
    fixes: list[str] = []
    if checked.too_long:
        blockers.append(
            _blocker("INVALID_REQUIRED_OUTPUT", on_step, checked.issues[0], checked.suggestions)
        )
    if checked.notes_missing:
        blockers.append(
            _blocker(
                "MISSING_REQUIRED_NOTES",
                on_step,
                checked.problems[0]["message"],
                ["Send output.notesMarkdown: what you did, found and decided."],
            )
        )
    if checked.criteria_issues:
        code = "MISSING_REQUIRED_OUTPUT" if not (notes or "").strip() else "INVALID_REQUIRED_OUTPUT"
        pointer = {"kind": "output_contract", "contractRef": VALIDATION_CRITERIA_REF}
        message = "; ".join(checked.criteria_issues)
        blockers.append(_blocker(code, pointer, message, checked.criteria_suggestions))
        invalid += checked.criteria_issues
        fixes += checked.criteria_suggestions
    handed = checked.artifacts
    if handed.contract_issues:
        ref = str((step.get("outputContract") or {}).get("contractRef"))
        code = "MISSING_REQUIRED_OUTPUT" if handed.contract_missing else "INVALID_REQUIRED_OUTPUT"
        contract = CONTRACTS[ref]
        fix = [f"Hand over an artifact like {_json(contract.example)}."]
        pointer = {"kind": "output_contract", "contractRef": ref}
        blockers.append(_blocker(code, pointer, "; ".join(handed.contract_issues), fix))
        if not handed.contract_missing:
            invalid += handed.contract_issues
            fixes += fix
    assessed = [i for i in handed.issues if i not in handed.contract_issues]
    if assessed:
        pointer = {"kind": "output_contract", "contractRef": ASSESSMENT_CONTRACT_REF}
        extra = handed.suggestions[1:] if handed.contract_missing else list(handed.suggestions)
        extra = extra or _rating_lines(step_assessments(definition, step))
        blockers.append(_blocker("INVALID_REQUIRED_OUTPUT", pointer, "; ".join(assessed), extra))
        invalid += assessed
        fixes += extra
    for hit in handed.followup_hits:
        pointer = {
            "kind": "assessment_dimension",
            "assessmentId": hit["assessmentId"],
            "dimensionId": hit["dimensionId"],
        }
        message = (
            f"{hit['guidance']} (rated {hit['level']}: {hit['assessmentId']}.{hit['dimensionId']})"
        )
        fix = [f"Do the follow-up, then answer this step again: {hit['guidance']}"]
        blockers.append(_blocker("ASSESSMENT_FOLLOWUP_REQUIRED", pointer, message, fix))
    for issue in checked.context_issues:
        code = "MISSING_REQUIRED_OUTPUT" if issue.missing else "INVALID_REQUIRED_OUTPUT"
        blockers.append(_blocker(code, on_step, issue.message, [issue.fix]))
        if not issue.missing:  # as for an artifact: `validation` is about a value sent
            invalid.append(issue.message)
            fixes.append(issue.fix)
    blockers.sort(key=_sort_key)
    first_hit = handed.followup_hits[0] if handed.followup_hits else None
    return Blocked(
        [dict(p) for p in checked.problems],
        checked.issues + checked.followups,
        list(checked.suggestions),
        blockers[:MAX_BLOCKERS],
        {"issues": invalid, "suggestions": fixes} if invalid else None,
        {
            "title": (
                f"Assessment follow-up: {first_hit['assessmentId']}.{first_hit['dimensionId']}"
                f" rated {first_hit['level']}"
            ),
            "guidance": first_hit["guidance"],
        }
        if first_hit
        else None,
        _retry(definition, step, notes, artifacts, context, require_notes)
        if not checked.context_issues
        else _to_fill(
            checked,
            _retry(definition, step, notes, artifacts, context, require_notes),
            notes,
            artifacts,
            answer_context,
        ),
    )


def blocked_by_artifacts(
    definition: Mapping[str, Any], step: Mapping[str, Any], artifacts: Sequence[Any]
) -> Blocked | None:
    """What artifacts handed over with ``step`` done outside a session or run (the stateless
    next step) are sent back with: its output contract and assessments only — no notes, no
    criteria (`workflow_validate` checks those) — and the artifacts that pass; None when they
    pass."""
    handed_only = {k: v for k, v in step.items() if k != "validationCriteria"}
    checked = check_answer(definition, handed_only, None, artifacts, {})
    return blocked_by_checks(
        checked, definition, handed_only, None, artifacts, {}, require_notes=False
    )


def blocked_by_refusal(
    confirmation: Mapping[str, Any], step_id: str, notes: str | None, artifacts: Sequence[Any]
) -> Blocked:
    """A person rejected the answer (or closed the question): the step stays pending, and the
    retry is the same answer, put to the person again."""
    message = refusal_message(confirmation)
    pointer = {"kind": "workflow_step", "stepId": step_id}
    return Blocked(
        [{"kind": "confirmation", "message": message}],
        [message],
        [REFUSAL_SUGGESTION],
        [_blocker("USER_ONLY_DEPENDENCY", pointer, message, [REFUSAL_SUGGESTION])],
        retry={"notes": notes, "artifacts": list(artifacts)},
    )


# --- the answer to send instead --------------------------------------------------------------


def _retry(
    definition: Mapping[str, Any],
    step: Mapping[str, Any],
    notes: str | None,
    artifacts: Sequence[Any],
    context: Mapping[str, Any],
    require_notes: bool,
) -> dict[str, Any] | None:
    """The answer changed as little as the checks ask, if that passes them all; else None."""
    text = (notes or "")[:MAX_ANSWER_CHARS]
    if require_notes and notes_required(step) and not text.strip():
        text = RETRY_NOTES
    criteria = step.get("validationCriteria")
    if criteria is not None:
        text = _meeting(criteria, text)
    handed = [copy.deepcopy(a) for a in artifacts]
    contract = CONTRACTS.get(str((step.get("outputContract") or {}).get("contractRef")))
    if contract is not None:
        handed = [a for a in handed if not _is_kind(a, contract.kind)]
        handed.append(copy.deepcopy(contract.example))
    assessments = step_assessments(definition, step)
    if assessments:
        handed = [a for a in handed if not _is_kind(a, ASSESSMENT_KIND)]
        given = [a for a in artifacts if _is_kind(a, ASSESSMENT_KIND)]
        handed += [_rated(a, given, step, len(assessments) == 1) for a in assessments]
    sent_notes = text or None
    if not check_answer(
        definition, step, sent_notes, handed, context, require_notes=require_notes
    ).valid:
        return None
    return {"notes": sent_notes, "artifacts": handed}


def _to_fill(
    checked: AnswerCheck,
    passing: dict[str, Any] | None,
    notes: str | None,
    artifacts: Sequence[Any],
    answer_context: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The answer to complete when context values are wrong or missing: the answer that passes
    the other checks (else the one given), its context with a placeholder for each such value
    (what it must be, in words), and ``fill``: each placeholder's variable → its declared
    schema."""
    answer = passing or {"notes": notes, "artifacts": list(artifacts)}
    placeholders = {issue.name: _placeholder(issue.schema) for issue in checked.context_issues}
    return {
        **answer,
        "context": {**(answer_context or {}), **placeholders},
        "fill": {
            issue.name: _fill_schema(issue.name, issue.schema) for issue in checked.context_issues
        },
    }


def _placeholder(schema: Mapping[str, Any]) -> str:
    """What the value must be, in words, between ``<`` and ``>`` (at most `MAX_FILL_CHARS`)."""
    wanted = context_wanted(schema)
    if len(wanted) + 2 > MAX_FILL_CHARS:
        wanted = wanted[: MAX_FILL_CHARS - 3] + "…"
    return f"<{wanted}>"


def _fill_schema(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The declared schema, or — longer than `MAX_FILL_CHARS` as JSON — its type and where to
    read it."""
    text = _json(dict(schema))
    if len(text) <= MAX_FILL_CHARS:
        return dict(schema)
    short = {"type": schema["type"]} if isinstance(schema.get("type"), str) else {}
    note = f"the declaration of {name} in the workflow's context ({len(text):,} characters as JSON)"
    return {**short, "$comment": f"see {note}"}


def _is_kind(artifact: Any, kind: str) -> bool:
    return isinstance(artifact, Mapping) and artifact.get("kind") == kind


def _meeting(criteria: Any, text: str) -> str:
    """``text`` with what the criteria ask that it lacks: each required word, the length."""
    words: list[str] = []
    least: list[int] = []
    _wanted(criteria, words, least)
    missing = [w for w in dict.fromkeys(words) if w not in text]
    if missing:
        text = (text + "\n" if text else "") + " ".join(missing)
    if least and len(text) < max(least):
        text = text + " " + "." * max(max(least) - len(text) - 1, 0)
    return text


def _wanted(node: Any, words: list[str], least: list[int]) -> None:
    if isinstance(node, list):
        for item in node:
            _wanted(item, words, least)
    elif not isinstance(node, Mapping) or "not" in node:
        return
    elif "and" in node:
        _wanted(node["and"], words, least)
    elif "or" in node:
        options = node["or"]
        if isinstance(options, list) and options:
            _wanted(options[0], words, least)
    elif node.get("type") == "contains" and isinstance(node.get("value"), str):
        words.append(node["value"])
    elif node.get("type") == "regex" and isinstance(node.get("pattern"), str):
        if _NO_METACHARACTERS.fullmatch(node["pattern"]) and not node.get("flags"):
            words.append(node["pattern"])
    elif node.get("type") == "length" and isinstance(node.get("min"), int):
        least.append(node["min"])


def _rated(
    assessment: Mapping[str, Any], given: list[Any], step: Mapping[str, Any], only_one: bool
) -> dict[str, Any]:
    """An assessment artifact for ``assessment``: each dimension's given level when it is allowed
    and fires no follow-up, else the first allowed level that fires none."""
    assessment_id = assessment.get("id")
    mine = [a for a in given if only_one or a.get("assessmentId") == assessment_id]
    submitted = mine[0].get("dimensions") if mine else None
    submitted = submitted if isinstance(submitted, Mapping) else {}
    firing = _firing_levels(step, assessment_id)
    dimensions: dict[str, str] = {}
    for dim in assessment.get("dimensions") or []:
        if not isinstance(dim, Mapping):
            continue
        allowed = [str(level) for level in dim.get("levels") or []]
        calm = [level for level in allowed if level.casefold() not in firing] or allowed
        value = submitted.get(dim.get("id"))
        value = value.get("level") if isinstance(value, Mapping) else value
        chosen = next((lv for lv in calm if lv.casefold() == str(value).strip().casefold()), None)
        if calm:
            dimensions[str(dim.get("id"))] = chosen or calm[0]
    return {"kind": ASSESSMENT_KIND, "assessmentId": assessment_id, "dimensions": dimensions}


def _rating_lines(assessments: list[Mapping[str, Any]]) -> list[str]:
    return [
        f"Rate {dim.get('id')!r} of {assessment.get('id')!r} with one of: "
        + ", ".join(str(level) for level in dim.get("levels") or [])
        + "."
        for assessment in assessments
        for dim in assessment.get("dimensions") or []
        if isinstance(dim, Mapping)
    ]


def _firing_levels(step: Mapping[str, Any], assessment_id: Any) -> set[str]:
    consequences = step.get("assessmentConsequences")
    levels = set()
    for consequence in consequences if isinstance(consequences, list) else []:
        when = consequence.get("when") if isinstance(consequence, Mapping) else None
        if isinstance(when, Mapping) and when.get("forAssessment") in (None, assessment_id):
            levels.add(str(when.get("anyEqualsLevel", "")).casefold())
    return levels


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
