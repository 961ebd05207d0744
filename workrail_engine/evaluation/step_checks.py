"""The checks an agent's answer to a step must pass: one function for every path that takes one.

Checking a step's output (``workflow_validate``), answering a run's waiting step and advancing a
session all call `check_answer`: the answer's length (`MAX_ANSWER_CHARS`, the agent's and the
client's model's alike), notes (see `notes_required`), the step's
``validationCriteria`` on the output text, its output contract and assessments on the
artifacts handed over, and the context variables the answer sets against the workflow's declared
``context`` (their JSON Schemas). Each problem says what to send instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..definition.declared import declared_context, required_sets
from ..limits import MAX_ANSWER_CHARS
from .contracts import ArtifactCheck, check_step_artifacts
from .json_schemas import json_schema_problems, schema_errors
from .rules import validate_output

__all__ = [
    "MAX_SHOWN_VALUE_CHARS",
    "AnswerCheck",
    "ContextIssue",
    "check_answer",
    "context_problems",
    "context_wanted",
    "unset_context",
    "criteria_apply",
    "notes_required",
]

# a context value quoted in a blocked answer's message (twice that for the reason): enough to
# recognise it, however long the value
MAX_SHOWN_VALUE_CHARS = 80


class ContextIssue(NamedTuple):
    """A declared context variable an answer set to a value its schema refuses (``missing``
    False) or left out though its step ``sets`` it (``missing`` True): what to say, what to send
    instead, and the declared schema the value must meet."""

    name: str
    message: str
    fix: str
    schema: Mapping[str, Any]
    missing: bool = False


@dataclass
class AnswerCheck:
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)  # assessment consequences that fired
    # One entry per problem: {kind: notes | criteria | artifacts | followup | context, message}
    problems: list[dict[str, str]] = field(default_factory=list)
    # Where they come from, for an answer that says what to send (`answers.blockers`): the
    # answer too long, notes missing, the criteria's own issues, the artifacts' check.
    too_long: bool = False
    notes_missing: bool = False
    criteria_issues: list[str] = field(default_factory=list)
    criteria_suggestions: list[str] = field(default_factory=list)
    artifacts: ArtifactCheck = field(default_factory=ArtifactCheck)
    # per declared context variable the answer set wrongly or left out (`ContextIssue`)
    context_issues: list[ContextIssue] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems


def notes_required(step: Mapping[str, Any]) -> bool:
    """Whether a session's answer to ``step`` must carry notes: not when the step says
    ``notesOptional``, nor when it has an ``outputContract`` — its artifact is the evidence of
    the work (a loop decision, a review verdict), as upstream WorkRail 3.x rules."""
    return step.get("notesOptional") is not True and step.get("outputContract") is None


def criteria_apply(step: Mapping[str, Any]) -> bool:
    """Whether ``step``'s ``validationCriteria`` judge its notes: not when it has an output
    contract or assessments — the artifacts are then the evidence checked, and upstream WorkRail
    3.x checks the criteria of no such step (its own workflows pair them: a walk through them
    would otherwise be blocked where upstream's passes)."""
    return step.get("outputContract") is None and not step.get("assessmentRefs")


def check_answer(
    workflow: Mapping[str, Any],
    step: Mapping[str, Any],
    output: str | None,
    artifacts: Any,
    context: Mapping[str, Any],
    *,
    require_notes: bool = False,
    answer_context: Mapping[str, Any] | None = None,
) -> AnswerCheck:
    """``output`` (the text, or the notes of a session step) and ``artifacts`` checked against
    ``step``; ``context`` is what criteria conditions see, ``answer_context`` what the answer
    sets (checked against the declared ``context``, and for each variable of the step's ``sets``
    that must be set; None: no answer's context to check, as for `workflow_validate`).
    ``require_notes``: an empty output is a
    problem unless the step's notes are optional (sessions; a stateless check asks no notes)."""
    check = AnswerCheck()
    if output is not None and len(output) > MAX_ANSWER_CHARS:
        # Refused before any check reads it: nothing of it is stored or shown.
        message = (
            f"the answer is {len(output):,} characters; at most {MAX_ANSWER_CHARS:,} are taken"
        )
        check.issues.append(message)
        check.suggestions.append("send a shorter recap of what was done, found and decided")
        check.problems.append({"kind": "notes", "message": message})
        check.too_long = True
        return check
    if require_notes and notes_required(step) and not (output or "").strip():
        message = (
            f"step {step.get('id')!r} needs notes: a short recap of what was done, found and "
            "decided (markdown)"
        )
        check.issues.append(message)
        check.suggestions.append("send notes describing this step's work with the same answer")
        check.problems.append({"kind": "notes", "message": message})
        check.notes_missing = True
    criteria = step.get("validationCriteria")
    if criteria is not None and criteria_apply(step):
        validated = validate_output(criteria, output or "", dict(context))
        check.issues += validated.issues
        check.suggestions += validated.suggestions
        check.problems += [{"kind": "criteria", "message": m} for m in validated.issues]
        check.criteria_issues = list(validated.issues)
        check.criteria_suggestions = list(validated.suggestions)
    handed = check.artifacts = check_step_artifacts(workflow, step, artifacts or [])
    check.issues += handed.issues
    check.suggestions += handed.suggestions
    check.followups += handed.followups
    check.problems += [{"kind": "artifacts", "message": m} for m in handed.issues]
    check.problems += [{"kind": "followup", "message": m} for m in handed.followups]
    if answer_context is not None:
        check.context_issues = context_problems(workflow, answer_context) + unset_context(
            workflow, step, answer_context
        )
    check.issues += [issue.message for issue in check.context_issues]
    check.suggestions += [issue.fix for issue in check.context_issues]
    check.problems += [{"kind": "context", "message": i.message} for i in check.context_issues]
    return check


def context_problems(
    workflow: Mapping[str, Any], answer_context: Mapping[str, Any]
) -> list[ContextIssue]:
    """A `ContextIssue` for each variable of ``answer_context`` whose value its declared schema
    refuses. Undeclared variables pass (a workflow declares what it checks, not all an agent may
    say), as do the variables of a workflow that declares none or a schema that cannot be
    compiled (`workrail validate` reports it)."""
    declared = declared_context(workflow)
    if not declared:
        return []
    out: list[ContextIssue] = []
    for name, value in answer_context.items():
        schema = declared.get(name)
        if schema is None or json_schema_problems(dict(schema)):
            continue
        errors = schema_errors(dict(schema), value)
        if not errors:
            continue
        where, why = errors[0]
        why = (
            why
            if len(why) <= MAX_SHOWN_VALUE_CHARS * 2
            else why[: MAX_SHOWN_VALUE_CHARS * 2 - 1] + "…"
        )
        inside = "" if where == "the top level" else f" at {where}"
        message = f"context.{name} is {_shown(value)}, which its declaration refuses{inside}: {why}"
        out.append(ContextIssue(name, message, _send(name, schema), schema))
    return out


def unset_context(
    workflow: Mapping[str, Any], step: Mapping[str, Any], answer_context: Mapping[str, Any]
) -> list[ContextIssue]:
    """A `ContextIssue` for each variable of ``step``'s ``sets`` that must be set
    (`required_sets`) and that ``answer_context`` leaves out."""
    return [
        ContextIssue(
            name,
            f"context.{name} is not set: step {step.get('id')!r} asks the answer to set it",
            _send(name, schema),
            schema,
            missing=True,
        )
        for name, schema in required_sets(workflow, step).items()
        if name not in answer_context
    ]


def _send(name: str, schema: Mapping[str, Any]) -> str:
    return f"Send context.{name} as {context_wanted(schema)}."


def context_wanted(schema: Mapping[str, Any]) -> str:
    """What a value of a declared variable must be, in words: its ``enum``, else its ``type``."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "one of " + ", ".join(_shown(value) for value in enum)
    kind = schema.get("type")
    if isinstance(kind, str):
        return f"a JSON {kind}"
    if isinstance(kind, list):
        return "a JSON " + " or ".join(str(k) for k in kind)
    return "a value its declaration in the workflow's context accepts"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_SHOWN_VALUE_CHARS else text[: MAX_SHOWN_VALUE_CHARS - 1] + "…"
