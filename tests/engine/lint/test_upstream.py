"""Upstream WorkRail's features (WR206, WR7xx): functions, assessments, fragments, contracts,
references, delegations and template calls."""

from __future__ import annotations

import copy
import json

from tests.engine.lint.lint_workflows import (
    BASE,
    MIXED_GROUP,
    bad_and_good,
    check_bad_and_good,
    lint,
    mutate,
    set_at,
)
from workrail_engine.text.document import parse_document

FRAGMENT = {"id": "scope", "text": "Keep the change small."}
REFERENCE = {
    "id": "api-schema",
    "title": "API",
    "source": "./spec/api.json",
    "purpose": "Contract",
    "authoritative": True,
}
PLAN_ASSESSED = {**BASE["steps"][0], "assessmentRefs": ["quality"]}


def FOLLOWUP(level):  # noqa: N802 - reads as the constant it builds
    return {
        "when": {"anyEqualsLevel": level},
        "effect": {"kind": "require_followup", "guidance": "Raise it before moving on."},
    }


def DELEGATION(workflow_id):  # noqa: N802
    return {
        "id": "fan-out",
        "type": "parallel",
        "title": "Fan out",
        "parallelDelegations": [{"workflowId": workflow_id, "goal": "Ideas"}],
    }


# code, bad change, good change, text the diagnostic must sit on
CASES = [
    (
        "WR206",
        lambda w: w["steps"].append(MIXED_GROUP),
        lambda w: w["steps"].append({k: v for k, v in MIXED_GROUP.items() if k != "steps"}),
        '"steps"',
    ),
    (
        "WR701",
        set_at(["steps", 0, "functionReferences"], ["cheks()"]),
        set_at(["steps", 0, "functionReferences"], ["checks()"]),
        '"cheks()"',
    ),
    (
        "WR702",
        set_at(["steps", 0, "assessmentRefs"], ["qualty"]),
        set_at(["steps", 0, "assessmentRefs"], ["quality"]),
        '"qualty"',
    ),
    (
        "WR704",
        set_at(["steps", 0, "promptFragments"], [FRAGMENT, FRAGMENT]),
        set_at(["steps", 0, "promptFragments"], [FRAGMENT, {**FRAGMENT, "id": "scope-large"}]),
        '"scope"',
    ),
    (
        "WR705",
        set_at(["steps", 0, "outputContract"], {"contractRef": "wr.contracts.loop_ctrl"}),
        set_at(["steps", 0, "outputContract"], {"contractRef": "wr.contracts.loop_control"}),
        '"wr.contracts.loop_ctrl"',
    ),
    (
        "WR706",
        set_at(["references"], [REFERENCE, {**REFERENCE, "title": "Again"}]),
        set_at(["references"], [REFERENCE, {**REFERENCE, "id": "api-guide"}]),
        '"api-schema"',
    ),
    (
        "WR707",
        lambda w: w["assessments"].append(copy.deepcopy(w["assessments"][0])),
        lambda w: w["assessments"].append({**copy.deepcopy(w["assessments"][0]), "id": "risk"}),
        '"quality"',
    ),
    (
        "WR708",
        set_at(["steps", 0], {**PLAN_ASSESSED, "assessmentConsequences": [FOLLOWUP("medium")]}),
        set_at(["steps", 0], {**PLAN_ASSESSED, "assessmentConsequences": [FOLLOWUP("low")]}),
        '"medium"',
    ),
    (
        "WR710",
        lambda w: w["steps"].append(DELEGATION("demo")),
        lambda w: w["steps"].append(DELEGATION("wr.routine-ideation")),
        '"demo"',
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def test_template_calls_name_routines_of_the_catalog():
    from workrail_engine.lint.upstream import template_call_diagnostics

    caller = mutate(
        set_at(["steps", 0], {"id": "plan", "title": "Plan", "templateCall": {"templateId": "x"}})
    )

    def calling(template_id):
        caller["steps"][0]["templateCall"]["templateId"] = template_id
        return parse_document(json.dumps(caller, indent=2), "demo.json")

    bad = calling("wr.templates.routine.ideation")
    [found] = template_call_diagnostics([bad], {"demo", "routine-other"})["demo.json"]
    assert found.code == "WR703" and found.pointer == "/steps/0/templateCall/templateId"
    assert bad.text[found.span.start : found.span.end] == '"wr.templates.routine.ideation"'
    assert "wr.routine-ideation" in found.message
    # each of upstream's three spellings of the routine's id provides the template
    for routine_id in ("wr.routine-ideation", "routine-ideation", "ideation"):
        assert template_call_diagnostics([bad], {routine_id}) == {}
    # a template id that is no routine template at all
    [other] = template_call_diagnostics([calling("wr.templates.other")], {"other"})["demo.json"]
    assert "templates are routines" in other.message
    # and the single-file lint has no opinion: it cannot see the catalog
    assert [d.code for d in lint(caller).diagnostics] == []
