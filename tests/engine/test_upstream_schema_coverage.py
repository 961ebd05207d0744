"""Our schema knows every property name of upstream WorkRail's latest schema.

The names are held here as data, each definition with the upstream release it was read from
(`spec/workflow.schema.json` of 3.121.0, schema $id v0.3.0), and mapped to where our schema
takes them. A name upstream adds in a later release fails this test until ours knows it too.
"""

from __future__ import annotations

from typing import Any

import pytest

from workrail_engine.schema import load_schema

RELEASE = "3.121.0"

# upstream definition → (release, its property names, where our schema takes them)
UPSTREAM_PROPERTIES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "(root)": (
        RELEASE,
        (
            "about",
            "assessments",
            "clarificationPrompts",
            "description",
            "examples",
            "extensionPoints",
            "features",
            "functionDefinitions",
            "id",
            "metaGuidance",
            "metricsProfile",
            "modelTier",
            "name",
            "preconditions",
            "recommendedPreferences",
            "references",
            "steps",
            "validatedAgainstSpecVersion",
            "version",
        ),
        ("",),
    ),
    "recommendedPreferences": (
        RELEASE,
        ("recommendedAutonomy", "recommendedRiskPolicy"),
        ("/properties/recommendedPreferences",),
    ),
    "extensionPoint": (
        RELEASE,
        ("acceptedKinds", "default", "purpose", "slotId"),
        ("/$defs/extensionPoint",),
    ),
    "workflowReference": (
        RELEASE,
        ("authoritative", "id", "purpose", "resolveFrom", "source", "title"),
        ("/$defs/workflowReference",),
    ),
    "functionParameter": (
        RELEASE,
        ("default", "description", "enum", "name", "required", "type"),
        ("/$defs/functionParameter",),
    ),
    "functionDefinition": (
        RELEASE,
        ("definition", "name", "parameters", "scope"),
        ("/$defs/functionDefinition",),
    ),
    "standardStep": (
        RELEASE,
        (
            "agentRole",
            "askForFiles",
            "assessmentConsequences",
            "assessmentRefs",
            "audit",
            "functionCalls",
            "functionDefinitions",
            "functionReferences",
            "guidance",
            "hasValidation",
            "id",
            "modelTier",
            "notesOptional",
            "outputContract",
            "prompt",
            "promptBlocks",
            "promptFragments",
            "requireConfirmation",
            "runCondition",
            "templateCall",
            "title",
            "validationCriteria",
            "verification",
        ),
        ("/$defs/promptStep",),
    ),
    "loopStep": (
        RELEASE,
        (
            "body",
            "functionDefinitions",
            "id",
            "loop",
            "notesOptional",
            "requireConfirmation",
            "runCondition",
            "title",
            "type",
        ),
        ("/$defs/loopStep",),
    ),
    "loopConfig": (
        RELEASE,
        (
            "condition",
            "conditionSource",
            "count",
            "indexVar",
            "itemVar",
            "items",
            "iterationVar",
            "maxIterations",
            "type",
        ),
        ("/$defs/loopStep/properties/loop",),
    ),
    "loopConfig.conditionSource": (
        RELEASE,
        ("condition", "contractRef", "kind", "loopId"),
        ("/$defs/loopStep/properties/loop/properties/conditionSource",),
    ),
    "condition": (
        RELEASE,
        (
            "and",
            "contains",
            "equals",
            "gt",
            "gte",
            "in",
            "lt",
            "lte",
            "not",
            "not_equals",
            "or",
            "var",
        ),
        ("/$defs/condition",),
    ),
    "promptFragment": (RELEASE, ("id", "text", "when"), ("/$defs/promptFragment",)),
    "confirmationRule": (RELEASE, ("condition", "kind"), ("/$defs/confirmationRule",)),
    "validationRule": (
        RELEASE,
        ("condition", "flags", "max", "message", "min", "pattern", "schema", "type", "value"),
        ("/$defs/rule",),
    ),
    "validationComposition": (RELEASE, ("and", "not", "or"), ("/$defs/criterion",)),
    "outputContract": (RELEASE, ("contractRef", "required"), ("/$defs/outputContract",)),
    "assessmentDimension": (
        RELEASE,
        ("id", "levels", "purpose", "required"),
        ("/$defs/assessmentDimension",),
    ),
    "assessmentDefinition": (
        RELEASE,
        ("dimensions", "id", "purpose"),
        ("/$defs/assessmentDefinition",),
    ),
    "assessmentConsequence": (RELEASE, ("effect", "when"), ("/$defs/assessmentConsequence",)),
    "assessmentConsequenceTrigger": (
        RELEASE,
        ("anyEqualsLevel", "forAssessment"),
        ("/$defs/assessmentConsequence/properties/when",),
    ),
    "assessmentConsequenceEffect": (
        RELEASE,
        ("guidance", "kind"),
        ("/$defs/assessmentConsequence/properties/effect",),
    ),
    "functionCall": (RELEASE, ("args", "name"), ("/$defs/functionCall",)),
    "promptBlocks": (
        RELEASE,
        ("constraints", "goal", "outputRequired", "procedure", "verify"),
        ("/$defs/promptBlocks",),
    ),
    "promptPart": (RELEASE, ("kind", "refId", "text"), ("/$defs/promptPart",)),
    "templateCall": (RELEASE, ("args", "templateId"), ("/$defs/templateCall",)),
    "auditConfig": (RELEASE, ("prompt", "rubric"), ("/$defs/promptStep/properties/audit",)),
    "synthesisConfig": (
        RELEASE,
        ("outputContract", "prompt"),
        ("/$defs/parallelDelegationGroup/properties/synthesis",),
    ),
    "verificationConfig": (
        RELEASE,
        ("command", "prompt"),
        ("/$defs/promptStep/properties/verification",),
    ),
    "parallelStep": (
        RELEASE,
        (
            "id",
            "notesOptional",
            "parallelDelegations",
            "requireConfirmation",
            "runCondition",
            "synthesis",
            "title",
            "type",
        ),
        ("/$defs/parallelDelegationGroup",),
    ),
    "parallelDelegation": (
        RELEASE,
        (
            "allowedTools",
            "args",
            "contextMapping",
            "goal",
            "modelTier",
            "runCondition",
            "workflowId",
        ),
        ("/$defs/parallelDelegation",),
    ),
}


def _node(pointer: str) -> Any:
    node: Any = load_schema()
    for part in pointer.split("/")[1:]:
        node = node[part]
    return node


def _names(node: Any, seen: set[int] | None = None) -> set[str]:
    """Property names a value checked by ``node`` may have: through $ref, if/then/else, allOf."""
    seen = seen if seen is not None else set()
    if not isinstance(node, dict) or id(node) in seen:
        return set()
    seen.add(id(node))
    names = set(node.get("properties", {}))
    if "$ref" in node:
        names |= _names(_node(node["$ref"][1:]), seen)
    for key in ("then", "else"):
        names |= _names(node.get(key), seen)
    for branch in node.get("allOf", []):
        names |= _names(branch, seen)
    return names


@pytest.mark.parametrize("definition", list(UPSTREAM_PROPERTIES))
def test_ours_knows_every_upstream_property(definition):
    release, names, ours = UPSTREAM_PROPERTIES[definition]
    known = set().union(*(_names(_node(pointer)) for pointer in ours))
    missing = sorted(set(names) - known)
    assert missing == [], f"upstream {release} {definition}: unknown here: {missing}"


def test_the_data_covers_a_hundred_names():
    # Guards the table itself: upstream 3.121.0's schema has this many distinct property names.
    distinct = {name for _, names, _ in UPSTREAM_PROPERTIES.values() for name in names}
    assert len(distinct) >= 100
