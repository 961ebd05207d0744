"""Artifacts an agent hands over with a step: output contracts, loop decisions and assessments.

A step with ``outputContract: {contractRef, required?}`` asks for a structured artifact besides its
text output; the artifact is a JSON object whose ``kind`` names it. The contracts are upstream
WorkRail 3.x's (``wr.contracts.*``); the shapes below are our own JSON Schemas of the fields
upstream checks. ``wr.contracts.loop_control`` carries a loop's ``decision`` (continue | stop) for
loops whose ``conditionSource`` is that contract.

A step with ``assessmentRefs`` asks for a ``wr.assessment`` artifact rating each dimension of the
referenced assessments with one of its levels (matched ignoring case and surrounding space; a
dimension with ``required: false`` may be left out). Its ``assessmentConsequences`` (``when:
{anyEqualsLevel, forAssessment?}``, ``effect: {kind: require_followup, guidance}``) keep the step
pending, with the effect's guidance, while any rated dimension sits at that level.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jsonschema_rs

from .contract_refs import LOOP_CONTROL

__all__ = [
    "ASSESSMENT_KIND",
    "CONTRACTS",
    "LOOP_CONTROL",
    "ArtifactCheck",
    "Contract",
    "assessment_lines",
    "check_step_artifacts",
    "contract_lines",
    "loop_decision",
    "step_assessments",
]

ASSESSMENT_KIND = "wr.assessment"

_TEXT = {"type": "string", "minLength": 1}
_SHORT_LIST = {"type": "array", "items": _TEXT}
_LEVEL = {"enum": ["high", "medium", "low"]}


@dataclass(frozen=True)
class Contract:
    ref: str
    kind: str
    schema: dict[str, Any]
    summary: str
    example: dict[str, Any]


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
    }


def _contract(
    name: str,
    summary: str,
    required: dict[str, Any],
    example: dict[str, Any],
    optional: dict[str, Any] | None = None,
    strict: bool = False,
) -> Contract:
    """``strict``: no fields beyond those named, as upstream's schema of the artifact says."""
    kind = f"wr.{name}"
    fields = {"kind": {"const": kind}, **required}
    schema = _object(fields, optional)
    if strict:
        schema["additionalProperties"] = False
    return Contract(f"wr.contracts.{name}", kind, schema, summary, {"kind": kind, **example})


_COUNT = {"type": "integer", "minimum": 0}
# Upstream's loop-control metadata, field by field (its limits: a reason of 1024 characters, a
# confidence from 0 to 100); nothing else may ride along.
_LOOP_METADATA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": 1024},
        "issuesFound": _COUNT,
        "iterationIndex": _COUNT,
        "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "additionalProperties": False,
}
_FINDING_CATEGORIES = [
    "correctness",
    "security",
    "architecture",
    "ux",
    "performance",
    "testing",
    "style",
]


CONTRACTS: dict[str, Contract] = {
    c.ref: c
    for c in (
        _contract(
            "loop_control",
            'whether the loop runs again: decision "continue" or "stop"',
            {"decision": {"enum": ["continue", "stop"]}},
            {"decision": "stop"},
            {
                "loopId": {"type": "string", "pattern": "^[a-z0-9_-]+$", "maxLength": 64},
                "metadata": _LOOP_METADATA,
            },
            strict=True,
        ),
        _contract(
            "review_verdict",
            "the review's verdict (clean | minor | blocking), confidence, findings and summary",
            {
                "verdict": {"enum": ["clean", "minor", "blocking"]},
                "confidence": _LEVEL,
                "findings": {
                    "type": "array",
                    # a finding may carry more (file, lines, remediation): only these are checked
                    "items": _object(
                        {
                            "severity": {"enum": ["critical", "major", "minor", "nit"]},
                            "summary": _TEXT,
                        },
                        {"findingCategory": {"enum": _FINDING_CATEGORIES}},
                    ),
                },
                "summary": _TEXT,
            },
            {"verdict": "clean", "confidence": "high", "findings": [], "summary": "…"},
            strict=True,
        ),
        _contract(
            "gate_verdict",
            "the gate's verdict (approved | rejected | uncertain), confidence and rationale",
            {
                "version": {"const": 1},
                "verdict": {"enum": ["approved", "rejected", "uncertain"]},
                "confidence": _LEVEL,
                "rationale": {"type": "string", "minLength": 20},
            },
            {"version": 1, "verdict": "approved", "confidence": "high", "rationale": "…"},
        ),
        _contract(
            "discovery_handoff",
            "the selected direction, its design document, confidence, invariants and rejected directions",
            {
                "version": {"const": 1},
                "selectedDirection": _TEXT,
                "designDocPath": {"type": "string"},
                "confidenceBand": _LEVEL,
                "keyInvariants": _SHORT_LIST,
            },
            {
                "version": 1,
                "selectedDirection": "…",
                "designDocPath": "…",
                "confidenceBand": "high",
                "keyInvariants": [],
            },
            # optional, as in upstream's schema of the artifact
            {
                "rejectedDirections": {
                    "type": "array",
                    "items": _object({"direction": _TEXT, "reason": _TEXT}),
                },
            },
        ),
        _contract(
            "shaping_handoff",
            "the pitch, selected shape, appetite, constraints, rabbit holes, out-of-scope items and checklist",
            {
                "version": {"const": 1},
                "pitchPath": _TEXT,
                "selectedShape": _TEXT,
                "appetite": _TEXT,
                "keyConstraints": _SHORT_LIST,
                "rabbitHoles": _SHORT_LIST,
                "outOfScope": _SHORT_LIST,
                "validationChecklist": _SHORT_LIST,
            },
            {"version": 1, "pitchPath": "…", "selectedShape": "…", "appetite": "…"},
        ),
        _contract(
            "coding_handoff",
            "the key decisions, known limitations, tests added and files changed",
            {
                "version": {"const": 1},
                "keyDecisions": _SHORT_LIST,
                "knownLimitations": _SHORT_LIST,
                "testsAdded": _SHORT_LIST,
                "filesChanged": _SHORT_LIST,
            },
            {
                "version": 1,
                "keyDecisions": [],
                "knownLimitations": [],
                "testsAdded": [],
                "filesChanged": [],
            },
        ),
        _contract(
            "coordinator_signal",
            "a payload object for the coordinator",
            {"payload": {"type": "object"}},
            {"payload": {}},
        ),
        _contract(
            "differentiation_handoff",
            "the differentiation handoff (version 1)",
            {"version": {"const": 1}},
            {"version": 1},
        ),
    )
}


@cache
def _validator(ref: str) -> Any:
    return jsonschema_rs.validator_for(CONTRACTS[ref].schema)


@dataclass
class ArtifactCheck:
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)  # assessment consequences that fired
    warnings: list[str] = field(default_factory=list)
    # Where the problems come from, for an answer that says what to send: the output contract's
    # issues (``contract_missing``: no artifact of its kind at all), and each dimension whose
    # rating fired a follow-up {assessmentId, dimensionId, level, guidance}.
    contract_issues: list[str] = field(default_factory=list)
    contract_missing: bool = False
    followup_hits: list[dict[str, str]] = field(default_factory=list)
    # The ratings of each assessment read without a problem, as an accepted answer records
    # them: {assessmentId, dimensions: [{dimensionId, level (as defined), rationale?}],
    # normalizationNotes: [a rating matched only ignoring case and space, said how]}.
    assessments: list[dict[str, Any]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.issues and not self.followups


def _objects(artifacts: Any) -> list[Mapping[str, Any]]:
    if not isinstance(artifacts, Sequence) or isinstance(artifacts, (str, bytes)):
        return []
    return [a for a in artifacts if isinstance(a, Mapping)]


def _of_kind(artifacts: Any, kind: str) -> list[Mapping[str, Any]]:
    return [a for a in _objects(artifacts) if a.get("kind") == kind]


def loop_decision(artifacts: Any) -> str | None:
    """The decision of the last well-formed loop-control artifact, if any."""
    for artifact in reversed(_of_kind(artifacts, CONTRACTS[LOOP_CONTROL].kind)):
        if _validator(LOOP_CONTROL).is_valid(dict(artifact)):
            return str(artifact["decision"])
    return None


def contract_lines(output_contract: Any) -> list[str]:
    """What the step's text tells the agent about the artifact its contract requires."""
    if not isinstance(output_contract, Mapping) or not output_contract.get("contractRef"):
        return []
    ref = output_contract["contractRef"]
    contract = CONTRACTS.get(ref)
    optional = output_contract.get("required") is False
    need = "may also hand over" if optional else "must hand over"
    if contract is None:
        return [f"With this step you {need} an artifact matching contract {ref}."]
    return [
        f"With this step you {need} an artifact of kind {json.dumps(contract.kind)} "
        f"({contract.summary}), for example:",
        json.dumps(contract.example, ensure_ascii=False),
    ]


def step_assessments(
    workflow: Mapping[str, Any], step: Mapping[str, Any]
) -> list[Mapping[str, Any]]:
    refs = step.get("assessmentRefs")
    if not isinstance(refs, list) or not refs:
        return []
    return [
        a
        for a in workflow.get("assessments") or []
        if isinstance(a, Mapping) and a.get("id") in refs
    ]


def assessment_lines(assessments: list[Mapping[str, Any]]) -> list[str]:
    lines: list[str] = []
    for assessment in assessments:
        dims = [d for d in assessment.get("dimensions") or [] if isinstance(d, Mapping)]
        lines.append(
            f"Assess {assessment.get('id')!r} ({assessment.get('purpose', '')}): hand over an "
            f'artifact of kind "{ASSESSMENT_KIND}" with "assessmentId": '
            f"{json.dumps(assessment.get('id'))} and a level for each dimension:"
        )
        for dim in dims:
            levels = " | ".join(str(level) for level in dim.get("levels") or [])
            optional = " (optional)" if dim.get("required") is False else ""
            lines.append(f"- {dim.get('id')} ({levels}){optional}: {dim.get('purpose', '')}")
    return lines


def check_step_artifacts(
    workflow: Mapping[str, Any], step: Mapping[str, Any], artifacts: Any
) -> ArtifactCheck:
    """The step's output contract and assessments checked against the artifacts handed over."""
    check = ArtifactCheck()
    _check_contract(step.get("outputContract"), artifacts, check)
    assessments = step_assessments(workflow, step)
    recorded: dict[str, dict[str, str]] = {}
    for assessment in assessments:
        levels = _check_assessment(assessment, artifacts, len(assessments) == 1, check)
        if levels is not None:
            recorded[str(assessment.get("id"))] = levels
    if not check.issues:
        _consequences(step.get("assessmentConsequences"), recorded, check)
    return check


def _check_contract(output_contract: Any, artifacts: Any, check: ArtifactCheck) -> None:
    if not isinstance(output_contract, Mapping):
        return
    ref = output_contract.get("contractRef")
    contract = CONTRACTS.get(ref) if isinstance(ref, str) else None
    if contract is None:
        return  # an unknown contract cannot be checked; the lint reports it
    found = _of_kind(artifacts, contract.kind)
    if not found:
        if output_contract.get("required") is not False:
            kinds = (
                [a.get("kind") for a in artifacts if isinstance(a, Mapping)]
                if isinstance(artifacts, list)
                else []
            )
            handed = ", ".join(repr(k) for k in dict.fromkeys(kinds) if isinstance(k, str))
            check.issues.append(
                f"This step requires an artifact of kind {contract.kind!r} ({ref})"
                + (f"; handed over: {handed}." if handed else ".")
            )
            check.contract_issues.append(check.issues[-1])
            check.contract_missing = True
            check.suggestions.append(
                "Hand over an artifact like " + json.dumps(contract.example, ensure_ascii=False)
            )
        return
    for error in _validator(ref).iter_errors(dict(found[-1])):
        where = "/".join(str(part) for part in error.instance_path) or "(the artifact)"
        check.issues.append(f"Artifact {contract.kind!r} at {where}: {error.message}")
        check.contract_issues.append(check.issues[-1])


def _check_assessment(
    assessment: Mapping[str, Any], artifacts: Any, only_one: bool, check: ArtifactCheck
) -> dict[str, str] | None:
    assessment_id = assessment.get("id")
    candidates = _of_kind(artifacts, ASSESSMENT_KIND)
    if not only_one:
        candidates = [a for a in candidates if a.get("assessmentId") == assessment_id]
    if not candidates:
        check.issues.append(f"This step requires an assessment of {assessment_id!r}.")
        check.suggestions.append(
            f'Hand over an artifact {{"kind": "{ASSESSMENT_KIND}", "assessmentId": '
            f'{json.dumps(assessment_id)}, "dimensions": {{…}}}}.'
        )
        return None
    named = candidates[0].get("assessmentId")
    if named is not None and named != assessment_id:
        check.issues.append(
            f"The assessment handed over names {named!r}; this step asks for {assessment_id!r}."
        )
        check.suggestions.append(f'Set "assessmentId" to {json.dumps(assessment_id)}.')
        return None
    submitted = candidates[0].get("dimensions")
    submitted = submitted if isinstance(submitted, Mapping) else {}
    levels: dict[str, str] = {}
    rated: list[dict[str, str]] = []
    issues, warnings = len(check.issues), len(check.warnings)
    for dim in assessment.get("dimensions") or []:
        if not isinstance(dim, Mapping):
            continue
        value = submitted.get(dim.get("id"))
        level = _level(dim, value, check)
        if level is not None:
            levels[str(dim.get("id"))] = level
            rated.append({"dimensionId": str(dim.get("id")), "level": level, **_rationale(value)})
    if len(check.issues) == issues:
        check.assessments.append(
            {
                "assessmentId": assessment_id,
                "dimensions": rated,
                "normalizationNotes": check.warnings[warnings:],
            }
        )
    return levels


def _rationale(value: Any) -> dict[str, str]:
    """A rating's rationale ({"level", "rationale"}), when it says something."""
    rationale = value.get("rationale") if isinstance(value, Mapping) else None
    if isinstance(rationale, str) and rationale.strip():
        return {"rationale": rationale.strip()}
    return {}


def _level(dim: Mapping[str, Any], value: Any, check: ArtifactCheck) -> str | None:
    allowed = [str(level) for level in dim.get("levels") or []]
    if isinstance(value, Mapping):
        value = value.get("level")
    if value is None:
        if dim.get("required") is not False:
            check.issues.append(f"Assessment dimension {dim.get('id')!r} is missing.")
            check.suggestions.append(f"Rate {dim.get('id')!r} with one of: {', '.join(allowed)}.")
        return None
    matches = [level for level in allowed if level.casefold() == str(value).strip().casefold()]
    if len(matches) != 1:
        check.issues.append(
            f"Dimension {dim.get('id')!r}: level {value!r} is not one of {', '.join(allowed)}."
        )
        return None
    if matches[0] != value:
        check.warnings.append(f"Level {value!r} of {dim.get('id')!r} read as {matches[0]!r}.")
    return matches[0]


def _consequences(
    consequences: Any, recorded: dict[str, dict[str, str]], check: ArtifactCheck
) -> None:
    for consequence in consequences if isinstance(consequences, list) else []:
        when = consequence.get("when") if isinstance(consequence, Mapping) else None
        effect = consequence.get("effect") if isinstance(consequence, Mapping) else None
        if not isinstance(when, Mapping) or not isinstance(effect, Mapping):
            continue
        target = str(when.get("anyEqualsLevel", "")).casefold()
        scope = when.get("forAssessment")
        fired = [
            (assessment_id, dim)
            for assessment_id, levels in recorded.items()
            if scope is None or scope == assessment_id
            for dim, level in levels.items()
            if level.casefold() == target
        ]
        if fired:
            guidance = str(effect.get("guidance", "Follow up before moving on."))
            hits = [f"{assessment_id}.{dim}" for assessment_id, dim in fired]
            check.followups.append(
                f"{guidance} (rated {when.get('anyEqualsLevel')}: {', '.join(hits)})"
            )
            check.followup_hits += [
                {
                    "assessmentId": assessment_id,
                    "dimensionId": dim,
                    "level": str(when.get("anyEqualsLevel")),
                    "guidance": guidance,
                }
                for assessment_id, dim in fired
            ]
