"""Cases ported from upstream WorkRail v3.121.0's own test suite, as data.

Each case names the upstream file (under upstream's ``tests/``) and the test (``it(...)``) its
facts come from: the inputs and the outcome upstream's test expects. The wording of messages is
ours; where upstream's test checks its own sentence, the case checks the fact the sentence carries
(a rule's author-written message, the names an error must mention). Where we differ on purpose,
the case says ``differs=`` and asserts our documented behaviour (docs/compatibility.md,
"Upstream's test suite").

Kinds, and how tests/upstream/test_upstream_cases.py runs them (one MCP server process over stdio,
driven by the MCP SDK's client, and one ``workrail validate`` run for every lint case):

- ``condition``: a step whose ``runCondition`` is the condition, asked for by ``workflow_next``
  with the context: served (true) or skipped (false).
- ``template``: a step whose prompt is the template; ``workflow_next`` with the context must
  render ``prompt`` exactly (or contain each of ``prompt_has``).
- ``output``: ``workflow_validate`` of an output against a step's ``validationCriteria``.
- ``artifact``: ``workflow_validate`` with artifacts, against a step's ``outputContract`` or
  ``assessmentRefs``.
- ``walk``: successive ``workflow_next`` calls (the agent carries ``completedSteps`` and the
  returned ``context``), each expecting a step, completion, or an error.
- ``lint``: the error codes (and, where given, warning codes) of a file, by the MCP tool
  ``workflow_lint`` and by ``workrail validate`` (the language server's are checked too, by
  tests/lsp/test_lsp_upstream_cases.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

CONDITIONS = "unit/condition-evaluator.test.ts"
IN_OPERATOR = "unit/compiler/condition-in-operator.test.ts"
TEMPLATES = "unit/v2/context-template-resolver.test.ts"
VALIDATION = "unit/validation-engine.test.ts"
LOOP_ARTIFACT = "unit/v2/schemas/loop-control-artifact.test.ts"
LOOP_EVALUATOR = "unit/v2/loop-control-evaluator.test.ts"
ARTIFACT_CONTRACT = "unit/v2/artifact-contract-validation.test.ts"
REVIEW_VERDICT = "unit/artifact-contract-review-verdict.test.ts"
ASSESSMENT_VALIDATION = "unit/mcp/assessment-validation.test.ts"
ASSESSMENT_DEFINITIONS = "unit/compiler/assessment-definition-validation.test.ts"
PARALLEL = "unit/compiler/parallel-step-validation.test.ts"
REFERENCES = "unit/compiler/workflow-reference-validation.test.ts"
WORKFLOW_JSON = "unit/validate-workflow-json.test.ts"
TEMPLATE_REGISTRY = "unit/compiler/template-registry.test.ts"
RESOLVE_TEMPLATES = "unit/compiler/resolve-templates.test.ts"
ADVANCE_LOOP = "integration/v2-advance-loop-control.test.ts"
LOOP_INTERPRETER = "unit/workflow-interpreter-loop-artifacts.test.ts"
PROMPT_RENDERER = "unit/v2/prompt-renderer.test.ts"

CASES: list[dict[str, Any]] = []


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48].strip("-")


def case(kind: str, source: str, test: str, **fields: Any) -> None:
    """Add a case; its id is the test's name (with a counter where one test gives several)."""
    base = _slug(test)
    taken = sum(1 for c in CASES if c["base"] == base)
    CASES.append(
        {
            "kind": kind,
            "upstream": f"tests/{source}",
            "test": test,
            "base": base,
            "id": f"{base}-{taken + 1}" if taken else base,
            **fields,
        }
    )


def of_kind(kind: str) -> list[dict[str, Any]]:
    return [c for c in CASES if c["kind"] == kind]


# --- the file a lint case is (its id is the case's, unless the case is about the id) ----------


def lint_workflow_id(c: dict[str, Any]) -> str | None:
    workflow = c["workflow"]
    if c.get("keep_id"):
        found = workflow.get("id")
        return found if isinstance(found, str) else None
    return f"up-{c['id']}"


def lint_text(c: dict[str, Any]) -> str:
    if c["text"] is not None:
        return c["text"]
    workflow = dict(c["workflow"])
    wid = lint_workflow_id(c)
    if not c.get("keep_id"):
        workflow = {"id": wid, **workflow}
    return json.dumps(workflow, indent=2) + "\n"


def lint_file_name(c: dict[str, Any]) -> str:
    wid = lint_workflow_id(c) if c["workflow"] is not None else None
    return f"{wid if wid and wid.replace('-', '').isalnum() else c['id']}.json"


# --- conditions (runCondition through workflow_next) -----------------------------------------

T = "should return true for null/undefined conditions"
case("condition", CONDITIONS, T, condition={}, context={}, runs=True)

T = "should evaluate simple variable conditions"
_ctx: dict[str, Any] = {"taskScope": "small", "userLevel": "expert"}
for cond, runs in [
    ({"var": "taskScope", "equals": "small"}, True),
    ({"var": "taskScope", "equals": "large"}, False),
    ({"var": "userLevel", "not_equals": "novice"}, True),
    ({"var": "userLevel", "not_equals": "expert"}, False),
]:
    case("condition", CONDITIONS, T, condition=cond, context=_ctx, runs=runs)

T = "should evaluate numeric comparisons"
_ctx = {"complexity": 0.7, "score": 85}
for cond, runs in [
    ({"var": "complexity", "gt": 0.5}, True),
    ({"var": "complexity", "gt": 0.8}, False),
    ({"var": "complexity", "gte": 0.7}, True),
    ({"var": "score", "lt": 100}, True),
    ({"var": "score", "lte": 85}, True),
    ({"var": "score", "lte": 80}, False),
]:
    case("condition", CONDITIONS, T, condition=cond, context=_ctx, runs=runs)

T = "should evaluate logical operators"
_ctx = {"taskScope": "large", "userLevel": "expert", "complexity": 0.8}
for cond in [
    {"and": [{"var": "taskScope", "equals": "large"}, {"var": "userLevel", "equals": "expert"}]},
    {"or": [{"var": "taskScope", "equals": "small"}, {"var": "userLevel", "equals": "expert"}]},
    {"not": {"var": "taskScope", "equals": "small"}},
]:
    case("condition", CONDITIONS, T, condition=cond, context=_ctx, runs=True)

T = "should handle missing variables gracefully"
for cond in [{"var": "nonexistent", "equals": "value"}, {"var": "nonexistent", "gt": 0}]:
    case("condition", CONDITIONS, T, condition=cond, context={"taskScope": "small"}, runs=False)

T = "should evaluate variable truthiness"
_ctx = {"enabled": True, "disabled": False, "empty": "", "value": "test"}
for var, runs in [("enabled", True), ("disabled", False), ("empty", False), ("value", True)]:
    case("condition", CONDITIONS, T, condition={"var": var}, context=_ctx, runs=runs)

T = "should perform case-insensitive string comparisons"
_ctx = {"status": "Active", "mode": "  PRODUCTION  "}
for cond, runs in [
    ({"var": "status", "equals": "active"}, True),
    ({"var": "status", "equals": "ACTIVE"}, True),
    ({"var": "status", "equals": "inactive"}, False),
    ({"var": "mode", "equals": "production"}, True),
    ({"var": "mode", "equals": "PRODUCTION"}, True),
]:
    case("condition", CONDITIONS, T, condition=cond, context=_ctx, runs=runs)

T = "should perform type coercion for compatible types"
_ctx = {
    "stringNumber": "42",
    "actualNumber": 42,
    "stringBoolean": "true",
    "actualBoolean": True,
    "stringFalse": "false",
    "zeroString": "0",
}
for cond, runs in [
    ({"var": "stringNumber", "equals": 42}, True),
    ({"var": "actualNumber", "equals": "42"}, True),
    ({"var": "stringNumber", "equals": 41}, False),
    ({"var": "stringBoolean", "equals": True}, True),
    ({"var": "stringFalse", "equals": False}, True),
    ({"var": "zeroString", "equals": False}, True),
]:
    case("condition", CONDITIONS, T, condition=cond, context=_ctx, runs=runs)

T = "should handle null and undefined equivalence"
_ctx = {"nullValue": None, "emptyString": ""}
for cond, runs in [
    ({"var": "nullValue", "equals": None}, True),
    ({"var": "emptyString", "equals": None}, False),
]:
    case("condition", CONDITIONS, T, condition=cond, context=_ctx, runs=runs)
# JSON has no undefined: upstream's undefined value is an unset variable here, and a missing
# variable is not null (docs/conditions-and-rules.md), so `equals: null` does not hold.
case(
    "condition",
    CONDITIONS,
    T,
    condition={"var": "undefinedValue", "equals": None},
    context=_ctx,
    runs=False,
    differs="a missing variable is not null here",
)

T = "should evaluate string matching operators"
_CASE_SENSITIVE_HERE = [
    {"var": "description", "contains": "test"},
    {"var": "description", "contains": "TEST"},
    {"var": "description", "startsWith": "this"},
    {"var": "description", "startsWith": "THIS IS"},
    {"var": "description", "endsWith": "description"},
    {"var": "description", "endsWith": "DESCRIPTION"},
    {"var": "status", "matches": "^in_.*"},
    {"var": "description", "matches": "test.*description"},
]
_ctx = {
    "description": "  This is a Test Description  ",
    "filename": "example.json",
    "status": "IN_PROGRESS",
}
for cond, runs in [
    ({"var": "description", "contains": "test"}, True),
    ({"var": "description", "contains": "TEST"}, True),
    ({"var": "description", "contains": "missing"}, False),
    ({"var": "description", "startsWith": "this"}, True),
    ({"var": "description", "startsWith": "THIS IS"}, True),
    ({"var": "description", "startsWith": "description"}, False),
    ({"var": "description", "endsWith": "description"}, True),
    ({"var": "description", "endsWith": "DESCRIPTION"}, True),
    ({"var": "filename", "endsWith": ".json"}, True),
    ({"var": "filename", "endsWith": ".txt"}, False),
    ({"var": "status", "matches": "^in_.*"}, True),
    ({"var": "filename", "matches": "\\.(json|txt)$"}, True),
    ({"var": "description", "matches": "test.*description"}, True),
    ({"var": "status", "matches": "^completed"}, False),
]:
    # Ours compare case-sensitively and untrimmed (docs/conditions-and-rules.md): where that
    # changes the outcome, the case asserts ours.
    differs = None
    ours = runs
    if runs and cond in _CASE_SENSITIVE_HERE:
        ours, differs = False, "contains/startsWith/endsWith/matches are case-sensitive here"
    case("condition", CONDITIONS, T, condition=cond, context=_ctx, runs=ours, differs=differs)

_MODES = ["STANDARD", "THOROUGH"]
for test, cond, ctx, runs in [
    (
        "returns true when the variable value is in the array",
        {"var": "mode", "in": _MODES},
        {"mode": "STANDARD"},
        True,
    ),
    (
        "returns true when the variable value is in the array",
        {"var": "mode", "in": _MODES},
        {"mode": "THOROUGH"},
        True,
    ),
    (
        "returns false when the variable value is not in the array",
        {"var": "mode", "in": _MODES},
        {"mode": "QUICK"},
        False,
    ),
    (
        "returns false when the variable is undefined and array has no null/undefined entry",
        {"var": "mode", "in": _MODES},
        {},
        False,
    ),
    ("returns false for an empty in array", {"var": "mode", "in": []}, {"mode": "STANDARD"}, False),
    (
        "uses case-insensitive comparison (via lenientEquals)",
        {"var": "mode", "in": ["standard", "thorough"]},
        {"mode": "STANDARD"},
        True,
    ),
    ("works with numeric values", {"var": "level", "in": [1, 2, 3]}, {"level": 2}, True),
    ("works with numeric values", {"var": "level", "in": [1, 2, 3]}, {"level": 5}, False),
]:
    case("condition", IN_OPERATOR, test, condition=cond, context=ctx, runs=runs)
_MODE_AND_RISK = {"and": [{"var": "mode", "in": _MODES}, {"var": "risk", "equals": "High"}]}
for ctx, runs in [
    ({"mode": "STANDARD", "risk": "High"}, True),
    ({"mode": "QUICK", "risk": "High"}, False),
]:
    case(
        "condition",
        IN_OPERATOR,
        "composes with logical and",
        condition=_MODE_AND_RISK,
        context=ctx,
        runs=runs,
    )
# A missing variable is not null here (docs/conditions-and-rules.md): `in: [null]` does not hold.
case(
    "condition",
    IN_OPERATOR,
    "returns true when the variable is null/undefined and array contains null",
    condition={"var": "mode", "in": [None]},
    context={},
    runs=False,
    differs="a missing variable is not null here",
)


# --- templates ({{name}} in prompts through workflow_next) -----------------------------------

for test, prompt, ctx, rendered in [
    ("returns the template unchanged when no tokens are present", "Hello world.", {}, None),
    (
        "returns the template unchanged when no {{ is present",
        "Implement the slice named currentSlice.name without braces.",
        {},
        None,
    ),
    (
        "replaces a top-level variable token",
        "Mode: {{rigorMode}}.",
        {"rigorMode": "STANDARD"},
        "Mode: STANDARD.",
    ),
    (
        "replaces multiple distinct tokens in one pass",
        "{{a}} + {{b}} = {{c}}",
        {"a": 1, "b": 2, "c": 3},
        "1 + 2 = 3",
    ),
    (
        "replaces the same token appearing multiple times",
        "{{x}} and {{x}}",
        {"x": "hello"},
        "hello and hello",
    ),
    ("coerces numeric values to strings", "Pass {{n}}", {"n": 42}, "Pass 42"),
    ("coerces boolean values to strings", "Flag: {{flag}}", {"flag": False}, "Flag: false"),
    (
        "resolves one-level dot-path {{obj.prop}}",
        "Implement slice `{{currentSlice.name}}`.",
        {"currentSlice": {"name": "Slice 1: Schema", "index": 0}},
        "Implement slice `Slice 1: Schema`.",
    ),
    (
        "resolves two-level dot-path {{a.b.c}}",
        "{{user.address.city}}",
        {"user": {"address": {"city": "Montreal"}}},
        "Montreal",
    ),
    (
        "resolves a mix of flat and dotted tokens",
        "{{rigorMode}} — slice: {{currentSlice.name}}",
        {"rigorMode": "THOROUGH", "currentSlice": {"name": "Slice 2"}},
        "THOROUGH — slice: Slice 2",
    ),
    (
        "produces [unset: varName] for a missing top-level variable",
        "Mode: {{rigorMode}}.",
        {},
        "Mode: [unset: rigorMode].",
    ),
    (
        "produces [unset: path] for a missing dot-path variable",
        "Slice: {{currentSlice.name}}",
        {},
        "Slice: [unset: currentSlice.name]",
    ),
    (
        "produces [unset: path] when the parent object exists but the leaf is absent",
        "{{slice.title}}",
        {"slice": {"name": "x"}},
        "[unset: slice.title]",
    ),
    ("produces [unset: path] when value is null", "{{x}}", {"x": None}, "[unset: x]"),
    (
        "produces plain [unset: path] when array key is absent (arrays allow .length navigation)",
        "{{items.name}}",
        {"items": ["a", "b"]},
        "[unset: items.name]",
    ),
    (
        "leaves {{x + 1}} expressions unchanged — expressions are not evaluable",
        "Step {{currentStepNumber + 1}} of {{totalSteps}}",
        {"currentStepNumber": 2, "totalSteps": 5},
        "Step {{currentStepNumber + 1}} of 5",
    ),
    (
        "leaves {{fn()}} call-style tokens unchanged",
        "Rate: {{(processed / items.length * 100).toFixed(1)}}%",
        {},
        None,
    ),
    ("leaves tokens with spaces unchanged", "{{ rigorMode }}", {"rigorMode": "QUICK"}, None),
    (
        "resolves the same template correctly on two consecutive calls (no lastIndex bleed)",
        "{{a}} and {{b}} and {{a}}",
        {"a": "X", "b": "Y"},
        "X and Y and X",
    ),
    (
        "resolves items.length via dot-path into an array (arrays are objects)",
        "item {{currentIndex}} of {{items.length}}",
        {"currentIndex": 2, "items": ["a", "b", "c"]},
        "item 2 of 3",
    ),
]:
    case(
        "template",
        TEMPLATES,
        test,
        prompt=prompt,
        context=ctx,
        rendered=prompt if rendered is None else rendered,
    )

# Through the whole pipeline (compile, then render), a {{wr.refs.x}} naming no snippet of the compile
# step is refused, as upstream's sentinel scan refuses an unresolved {{wr.…}}: never rendered.
case(
    "walk",
    TEMPLATES,
    "does NOT replace {{wr.refs.*}} tokens",
    workflow={"steps": [{"id": "probe", "title": "Probe", "prompt": "See {{wr.refs.context}}."}]},
    calls=[{"error": -32002, "problems": ["WR806"], "message_has": ["wr.refs.context"]}],
)
# Where the walk fails on a value that is no object, the marker says why (our wording).
case(
    "template",
    TEMPLATES,
    "produces diagnostic message when intermediate path segment is not an object",
    prompt="{{a.b.c}}",
    context={"a": "flat-string"},
    prompt_has=["[unset: a.b.c", "'a' is a string", '"flat-string"', "not an object"],
    differs="the marker's wording is ours",
)
case(
    "template",
    TEMPLATES,
    "names the failing segment and its type when a string is treated as object",
    prompt="Implement: {{currentSlice.name}}",
    context={"currentSlice": "1: TerminalSignal type + SessionState field replacement"},
    prompt_has=[
        "Implement: [unset: currentSlice.name",
        "'currentSlice' is a string",
        '"1: TerminalSignal type + SessionState field replacement"',
    ],
    differs="the marker's wording is ours",
)
case(
    "template",
    TEMPLATES,
    "truncates long values in diagnostic messages at 60 chars",
    prompt="{{a.b}}",
    context={"a": "x" * 100},
    prompt_has=["…", "is a string"],
    prompt_shorter_than=150,
)


# promptFragments: appended to the step's prompt ("Base." here), each after a blank line, in order.
FRAGMENTS = "unit/v2/prompt-fragments-renderer.test.ts"
_QUICK = {"id": "quick", "when": {"var": "rigorMode", "equals": "QUICK"}, "text": "Keep it light."}
_DEEP = {
    "id": "deep",
    "when": {"var": "rigorMode", "in": ["STANDARD", "THOROUGH"]},
    "text": "Go deeper.",
}
_ALWAYS = {"id": "always", "text": "Always here."}
_THOROUGH = {
    "id": "conditional",
    "when": {"var": "rigorMode", "equals": "THOROUGH"},
    "text": "Thorough extra.",
}
_IN_LIST = {
    "id": "standard-thorough",
    "when": {"var": "rigorMode", "in": ["STANDARD", "THOROUGH"]},
    "text": "Deep work.",
}
for test, fragments, ctx, added in [
    (
        "appends matching fragment text when condition passes",
        [_QUICK, _DEEP],
        {"rigorMode": "QUICK"},
        ["Keep it light."],
    ),
    (
        "appends multiple matching fragments in declaration order",
        [
            {
                "id": "frag-a",
                "when": {"var": "rigorMode", "equals": "THOROUGH"},
                "text": "Fragment A.",
            },
            {"id": "frag-b", "when": {"var": "risk", "equals": "High"}, "text": "Fragment B."},
        ],
        {"rigorMode": "THOROUGH", "risk": "High"},
        ["Fragment A.", "Fragment B."],
    ),
    (
        "returns empty string when no fragments match",
        [{"id": "frag", "when": {"var": "rigorMode", "equals": "QUICK"}, "text": "Quick only."}],
        {"rigorMode": "THOROUGH"},
        [],
    ),
    (
        "appends a fragment with no when condition regardless of context",
        [_ALWAYS],
        {},
        ["Always here."],
    ),
    (
        "appends a fragment with no when condition regardless of context",
        [_ALWAYS],
        {"rigorMode": "QUICK"},
        ["Always here."],
    ),
    (
        "appends a fragment with no when condition regardless of context",
        [_ALWAYS],
        {"rigorMode": "THOROUGH"},
        ["Always here."],
    ),
    (
        "mixes always-include and conditional fragments correctly",
        [{**_ALWAYS, "text": "Common."}, _THOROUGH],
        {"rigorMode": "THOROUGH"},
        ["Common.", "Thorough extra."],
    ),
    (
        "mixes always-include and conditional fragments correctly",
        [{**_ALWAYS, "text": "Common."}, _THOROUGH],
        {"rigorMode": "QUICK"},
        ["Common."],
    ),
    (
        "appends when rigorMode is in the allowed list",
        [_IN_LIST],
        {"rigorMode": "STANDARD"},
        ["Deep work."],
    ),
    (
        "appends when rigorMode is in the allowed list",
        [_IN_LIST],
        {"rigorMode": "THOROUGH"},
        ["Deep work."],
    ),
    ("appends when rigorMode is in the allowed list", [_IN_LIST], {"rigorMode": "QUICK"}, []),
    (
        "returns only always-include fragments when context is empty (no runtime vars available)",
        [_ALWAYS, _THOROUGH],
        {},
        ["Always here."],
    ),
    (
        "preserves declaration order even when conditions match out of natural order",
        [
            {"id": "first", "when": {"var": "x", "equals": True}, "text": "First."},
            {"id": "second", "when": {"var": "y", "equals": True}, "text": "Second."},
            {"id": "third", "when": {"var": "z", "equals": True}, "text": "Third."},
        ],
        {"x": True, "y": True, "z": True},
        ["First.", "Second.", "Third."],
    ),
]:
    case(
        "template",
        FRAGMENTS,
        test,
        prompt="Base.",
        fragments=fragments,
        context=ctx,
        rendered="\n\n".join(["Base.", *added]),
    )


# --- output validation (workflow_validate) ----------------------------------------------------


def output(test: str, criteria: Any, out: str, valid: bool, *, context=None, issues=(), **more):
    case(
        "output",
        VALIDATION,
        test,
        criteria=criteria,
        output=out,
        context=context or {},
        valid=valid,
        issues_have=list(issues),
        **more,
    )


output("should validate empty criteria with non-empty output", [], "some output", True)
output("should fail validation with empty criteria and empty output", [], "", False)
output(
    "should fail validation with empty criteria and whitespace-only output", [], "   \n\t  ", False
)
_bare = {"type": "contains", "value": "OK", "message": "Must contain OK"}
output("passes when output satisfies a bare rule object", _bare, "All looks OK here", True)
output(
    "fails when output does not satisfy a bare rule object",
    _bare,
    "Attempted the step.",
    False,
    issues=["Must contain OK"],
)
_contains = [{"type": "contains", "value": "hello", "message": "Must contain hello"}]
output("should pass when output contains required value", _contains, "hello world", True)
output(
    "should fail when output does not contain required value",
    [{"type": "contains", "value": "goodbye", "message": "Must contain goodbye"}],
    "hello world",
    False,
    issues=["Must contain goodbye"],
)
output(
    "should use default message when none provided",
    [{"type": "contains", "value": "missing", "message": ""}],
    "hello world",
    False,
    issues=["Output must include: missing"],
)
# A rule message quoting JSON reads as a string to return: agents answer with it escaped (WR409).
_QUOTED_JSON_MESSAGE = 'Output must include "{\\"state\\": \\"init\\"}"'
output(
    "should warn when custom message includes quoted JSON snippet (agents often stringify JSON)",
    [{"type": "contains", "value": "state", "message": _QUOTED_JSON_MESSAGE}],
    "nope",
    False,
    issues=[_QUOTED_JSON_MESSAGE],
)
output(
    "should pass when output matches regex pattern",
    [{"type": "regex", "pattern": "^hello.*world$", "message": "Must match pattern"}],
    "hello beautiful world",
    True,
)
output(
    "should fail when output does not match regex pattern",
    [{"type": "regex", "pattern": "^goodbye.*world$", "message": "Must match pattern"}],
    "hello beautiful world",
    False,
    issues=["Must match pattern"],
)
output(
    "should support regex flags",
    [{"type": "regex", "pattern": "HELLO", "flags": "i", "message": "Must match case-insensitive"}],
    "hello world",
    True,
)
output(
    "should use default message when none provided",
    [{"type": "regex", "pattern": "missing", "message": ""}],
    "hello world",
    False,
    issues=["missing"],
)
_len = {"type": "length", "min": 5, "max": 15, "message": "Must be 5-15 characters"}
output("should pass when output length is within bounds", [_len], "hello world", True)
output(
    "should fail when output is too short",
    [{"type": "length", "min": 15, "message": "Too short"}],
    "hello",
    False,
    issues=["Too short"],
)
output(
    "should fail when output is too long",
    [{"type": "length", "max": 5, "message": "Too long"}],
    "hello world",
    False,
    issues=["Too long"],
)
output(
    "should use default message for min length",
    [{"type": "length", "min": 15, "message": ""}],
    "hello",
    False,
    issues=["15"],
)
output(
    "should use default message for max length",
    [{"type": "length", "max": 5, "message": ""}],
    "hello world",
    False,
    issues=["5"],
)
output(
    "should handle only min constraint",
    [{"type": "length", "min": 5, "message": "m"}],
    "hello world",
    True,
)
output(
    "should handle only max constraint",
    [{"type": "length", "max": 15, "message": "m"}],
    "hello world",
    True,
)
_three = [
    {"type": "contains", "value": "hello", "message": "Must contain hello"},
    {"type": "length", "min": 5, "max": 20, "message": "Must be 5-20 characters"},
    {"type": "regex", "pattern": "world$", "message": "Must end with world"},
]
output("should pass when all rules pass", _three, "hello world", True)
output(
    "should fail when any rule fails",
    [
        {"type": "contains", "value": "hello", "message": "Must contain hello"},
        {"type": "contains", "value": "missing", "message": "Must contain missing"},
        {"type": "length", "min": 5, "max": 20, "message": "Must be 5-20 characters"},
    ],
    "hello world",
    False,
    issues=["Must contain missing"],
    issue_count=1,
)
output(
    "should collect all failing rules",
    [
        {"type": "contains", "value": "missing1", "message": "Must contain missing1"},
        {"type": "contains", "value": "missing2", "message": "Must contain missing2"},
        {"type": "length", "min": 50, "message": "Must be at least 50 characters"},
    ],
    "hello world",
    False,
    issues=["Must contain missing1", "Must contain missing2", "Must be at least 50 characters"],
    issue_count=3,
)
_person = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "number"}},
    "required": ["name", "age"],
}
_schema_rule = [{"type": "schema", "schema": _person, "message": "Object schema validation failed"}]
output(
    "should validate valid JSON against object schema",
    _schema_rule,
    '{"name": "John", "age": 30}',
    True,
)
output(
    "should fail validation for invalid JSON against object schema",
    _schema_rule,
    '{"name": "John"}',
    False,
    issues=["Object schema validation failed"],
)
output(
    "should handle non-JSON input for schema validation",
    [{"type": "schema", "schema": {"type": "object"}, "message": "Invalid JSON input"}],
    "not json",
    False,
    issues=["Invalid JSON input"],
)
_list = {"type": "array", "items": {"type": "string"}, "minItems": 1}
output(
    "should validate array schema",
    [{"type": "schema", "schema": _list, "message": "Array schema validation failed"}],
    '["apple", "banana", "cherry"]',
    True,
)
output(
    "should fail validation for invalid array schema",
    [{"type": "schema", "schema": _list, "message": "Array schema validation failed"}],
    "[]",
    False,
    issues=["Array schema validation failed"],
)
output(
    "should provide detailed AJV error messages when custom message not provided",
    [
        {
            "type": "schema",
            "schema": {
                "type": "object",
                "properties": {"priority": {"type": "string", "enum": ["Low", "Medium", "High"]}},
                "required": ["priority"],
            },
            "message": "",
        }
    ],
    '{"priority": "Invalid"}',
    False,
    issues=["priority"],
)
output(
    "should handle multiple schema validations",
    [
        {"type": "schema", "schema": {"type": "object"}, "message": "Must be object"},
        {
            "type": "schema",
            "schema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            "message": "Must have name property",
        },
    ],
    '{"name": "John"}',
    True,
)
for schema, text in [
    ({"type": "string"}, '"hello"'),
    ({"type": "number"}, "42"),
    ({"type": "boolean"}, "true"),
]:
    output(
        "should handle basic JSON types validation",
        [{"type": "schema", "schema": schema, "message": "Wrong type"}],
        text,
        True,
    )
output(
    "should coerce double-encoded JSON into an object for schema validation and emit a warning",
    [
        {
            "type": "schema",
            "schema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            "message": "Must be an object",
        }
    ],
    '"{\\"name\\": \\"John\\"}"',
    True,
    suggestions_have=["double-encoded"],
)
_tickets = {
    "type": "contains",
    "value": "tickets",
    "condition": {"var": "taskType", "equals": "ticket-creation"},
    "message": "Must contain tickets for ticket creation",
}
output(
    "should apply rule when condition is met",
    [_tickets],
    "Created tickets successfully",
    True,
    context={"taskType": "ticket-creation", "userRole": "admin"},
)
output(
    "should skip rule when condition is not met",
    [_tickets],
    "Created documentation successfully",
    True,
    context={"taskType": "documentation", "userRole": "admin"},
)
output(
    "should fail validation when conditional rule fails",
    [
        {
            "type": "contains",
            "value": "urgent",
            "condition": {"var": "priority", "equals": "high"},
            "message": "High priority tasks must mention urgency",
        }
    ],
    "Created tickets successfully",
    False,
    context={"taskType": "ticket-creation", "priority": "high"},
    issues=["High priority tasks must mention urgency"],
)
output(
    "should handle complex conditional logic with AND operator",
    [
        {
            "type": "contains",
            "value": "urgent",
            "condition": {
                "and": [
                    {"var": "taskType", "equals": "ticket-creation"},
                    {"var": "priority", "equals": "high"},
                ]
            },
            "message": "High priority ticket creation must mention urgency",
        }
    ],
    "Created urgent tickets for high priority issues",
    True,
    context={"taskType": "ticket-creation", "userRole": "admin", "priority": "high"},
)
output(
    "should handle numeric comparison conditions",
    [
        {
            "type": "length",
            "min": 100,
            "condition": {"var": "taskComplexity", "gt": 7},
            "message": "Complex tasks require detailed output",
        }
    ],
    "This is a very detailed output for a complex task that requires extensive documentation "
    "and explanation of the implementation approach and methodology used",
    True,
    context={"taskComplexity": 8, "timeSpent": 45},
)
output(
    "should handle missing context variables gracefully",
    [
        {
            "type": "contains",
            "value": "admin",
            "condition": {"var": "userRole", "equals": "admin"},
            "message": "Admin users must mention admin in output",
        }
    ],
    "Created tickets successfully",
    True,
    context={"taskType": "ticket-creation"},
)
output(
    "should handle empty context gracefully",
    [
        {
            "type": "contains",
            "value": "test",
            "condition": {"var": "taskType", "equals": "testing"},
            "message": "Testing tasks must mention test",
        }
    ],
    "Some output without test",
    True,
)
_DONE = "Task completed successfully"
_SUCCESS = {"type": "contains", "value": "success", "message": "Must contain success"}
_COMPLETED = {"type": "contains", "value": "completed", "message": "Must contain completed"}
_FAILED = {"type": "contains", "value": "failed", "message": "Must contain failed"}
_ERROR = {"type": "contains", "value": "error", "message": "Must contain error"}
_TEN = {"type": "length", "min": 10, "message": "Must be at least 10 characters"}
# Upstream reports a failed composition with one sentence of its own; ours names the rules that
# failed (design §3): the cases check which rules are named.
output(
    "should handle AND operator with all rules passing",
    {"and": [_SUCCESS, _COMPLETED, _TEN]},
    _DONE,
    True,
)
output(
    "should handle AND operator with one rule failing",
    {"and": [_SUCCESS, _FAILED, _TEN]},
    _DONE,
    False,
    issues=["Must contain failed"],
    issue_count=1,
)
output(
    "should handle OR operator with one rule passing",
    {"or": [_FAILED, _SUCCESS, _ERROR]},
    _DONE,
    True,
)
output(
    "should handle OR operator with all rules failing",
    {
        "or": [
            _FAILED,
            _ERROR,
            {"type": "contains", "value": "warning", "message": "Must contain warning"},
        ]
    },
    _DONE,
    False,
    issues=["Must contain failed", "Must contain error", "Must contain warning"],
)
output(
    "should handle NOT operator with rule failing (composition passes)",
    {"not": {"type": "contains", "value": "error", "message": "Must not contain error"}},
    _DONE,
    True,
)
output(
    "should handle NOT operator with rule passing (composition fails)",
    {"not": {"type": "contains", "value": "success", "message": "Must not contain success"}},
    _DONE,
    False,
)
output(
    "should handle NOT with nested composition",
    {
        "not": {
            "and": [
                {"type": "contains", "value": "error", "message": "Must contain error"},
                {"type": "contains", "value": "critical", "message": "Must contain critical"},
            ]
        }
    },
    "Task completed successfully",
    True,
)
output(
    "should handle composition with different rule types",
    {
        "and": [
            {"type": "length", "min": 20, "message": "Must be detailed"},
            {
                "or": [
                    {
                        "type": "regex",
                        "pattern": "success",
                        "message": "Must match success pattern",
                    },
                    {"type": "contains", "value": "completed", "message": "Must contain completed"},
                ]
            },
            {"not": {"type": "contains", "value": "error", "message": "Must not contain error"}},
        ]
    },
    "Task has been completed successfully with all requirements met",
    True,
)
output(
    "should handle empty string output with valid criteria",
    [{"type": "length", "min": 0, "message": "Must be at least 0 characters"}],
    "",
    True,
)
output(
    "should handle very long output",
    [{"type": "length", "min": 5000, "message": "Must be at least 5000 characters"}],
    "a" * 10000,
    True,
)
output(
    "should handle special characters in regex",
    [{"type": "regex", "pattern": "\\$\\d+\\.\\d{2}", "message": "Must be currency format"}],
    "$123.45",
    True,
)


# --- artifacts (workflow_validate with artifacts) ---------------------------------------------

_LOOP_STEP = {"outputContract": {"contractRef": "wr.contracts.loop_control"}}
_LC = {"kind": "wr.loop_control"}


def loop_artifact(test: str, artifact: Any, valid: bool, source: str = LOOP_ARTIFACT, **more):
    case("artifact", source, test, step=_LOOP_STEP, artifacts=[artifact], valid=valid, **more)


loop_artifact(
    "accepts minimal valid artifact with continue decision",
    {**_LC, "loopId": "plan-iteration", "decision": "continue"},
    True,
)
loop_artifact(
    "accepts minimal valid artifact with stop decision",
    {**_LC, "loopId": "implementation-loop", "decision": "stop"},
    True,
)
loop_artifact(
    "accepts artifact with full metadata",
    {
        **_LC,
        "loopId": "review-cycle",
        "decision": "continue",
        "metadata": {
            "reason": "Found 2 gaps that need addressing",
            "issuesFound": 2,
            "iterationIndex": 3,
            "confidence": 85,
        },
    },
    True,
)
loop_artifact(
    "accepts artifact with partial metadata",
    {
        **_LC,
        "loopId": "test-loop",
        "decision": "stop",
        "metadata": {"reason": "Clean pass - no issues found"},
    },
    True,
)
loop_artifact(
    "accepts loopId with hyphens and underscores",
    {**_LC, "loopId": "plan_iteration-v2", "decision": "continue"},
    True,
)
loop_artifact(
    "rejects artifact with wrong kind",
    {"kind": "wrong_kind", "loopId": "test", "decision": "continue"},
    False,
)
loop_artifact(
    "rejects artifact with invalid decision", {**_LC, "loopId": "test", "decision": "maybe"}, False
)
loop_artifact(
    "accepts artifact with missing loopId (anonymous — engine infers from active loop)",
    {**_LC, "decision": "continue"},
    True,
)
loop_artifact("rejects artifact with missing decision", {**_LC, "loopId": "test"}, False)
loop_artifact(
    "rejects artifact with non-delimiter-safe loopId (uppercase)",
    {**_LC, "loopId": "TestLoop", "decision": "continue"},
    False,
)
loop_artifact(
    "rejects artifact with non-delimiter-safe loopId (spaces)",
    {**_LC, "loopId": "test loop", "decision": "continue"},
    False,
)
loop_artifact(
    "rejects artifact with extra fields (strict mode)",
    {**_LC, "loopId": "test", "decision": "continue", "extraField": "not allowed"},
    False,
)
loop_artifact(
    "rejects metadata with invalid confidence (> 100)",
    {**_LC, "loopId": "test", "decision": "continue", "metadata": {"confidence": 150}},
    False,
)
loop_artifact(
    "rejects metadata with negative issuesFound",
    {**_LC, "loopId": "test", "decision": "continue", "metadata": {"issuesFound": -1}},
    False,
)
loop_artifact(
    "returns invalid for artifact with bad loopId format",
    {**_LC, "loopId": "INVALID-CAPS", "decision": "continue"},
    False,
    LOOP_EVALUATOR,
)
case(
    "artifact",
    ARTIFACT_CONTRACT,
    "returns MISSING_REQUIRED_ARTIFACT when no artifact present",
    step=_LOOP_STEP,
    artifacts=[],
    valid=False,
)
case(
    "artifact",
    ARTIFACT_CONTRACT,
    "returns MISSING_REQUIRED_ARTIFACT when only non-loop-control artifacts (wrong-kind)",
    step=_LOOP_STEP,
    artifacts=[
        {"kind": "wr.assessment", "assessmentId": "my-gate", "dimensions": {"confidence": "high"}}
    ],
    valid=False,
    issues_have=["'wr.assessment'", "'wr.loop_control'"],
)
case(
    "artifact",
    ARTIFACT_CONTRACT,
    "allows missing artifact when required=false",
    step={"outputContract": {"contractRef": "wr.contracts.loop_control", "required": False}},
    artifacts=[],
    valid=True,
)

_VERDICT_STEP = {"outputContract": {"contractRef": "wr.contracts.review_verdict"}}
_CLEAN = {
    "kind": "wr.review_verdict",
    "verdict": "clean",
    "confidence": "high",
    "findings": [],
    "summary": "No issues found",
}
_MINOR = {
    "kind": "wr.review_verdict",
    "verdict": "minor",
    "confidence": "medium",
    "findings": [
        {"severity": "minor", "summary": "Missing test coverage", "findingCategory": "testing"},
        {"severity": "nit", "summary": "Inconsistent naming"},
    ],
    "summary": "Small issues only",
}


def verdict(test: str, artifacts: list[Any], valid: bool, step: Any = _VERDICT_STEP):
    case("artifact", REVIEW_VERDICT, test, step=step, artifacts=artifacts, valid=valid)


verdict("parses a clean verdict", [_CLEAN], True)
verdict("parses a minor verdict with findings", [_MINOR], True)
verdict(
    "returns null for extra fields on the outer verdict object (outer schema stays strict)",
    [{**_CLEAN, "unexpectedField": "value"}],
    False,
)
verdict(
    "preserves enrichment fields on findings (finding sub-schema is passthrough)",
    [
        {
            **_CLEAN,
            "verdict": "blocking",
            "findings": [
                {
                    "severity": "critical",
                    "summary": "Missing null check",
                    "findingCategory": "correctness",
                    "file": "src/daemon/session-handler.ts",
                    "startLine": 42,
                }
            ],
        }
    ],
    True,
)
verdict("returns null for invalid verdict value", [{**_CLEAN, "verdict": "approved"}], False)
verdict("returns null for missing required fields", [{"kind": "wr.review_verdict"}], False)
verdict(
    "returns MISSING_REQUIRED_ARTIFACT when artifact is absent (required by default)", [], False
)
verdict(
    "returns valid: true for absent artifact when required: false",
    [],
    True,
    {"outputContract": {"contractRef": "wr.contracts.review_verdict", "required": False}},
)
verdict(
    "returns INVALID_ARTIFACT_SCHEMA when artifact has wrong schema",
    [{"kind": "wr.review_verdict", "verdict": "not-a-valid-verdict"}],
    False,
)
verdict(
    "ignores non-verdict artifacts in the array",
    [{"kind": "wr.discovery_handoff", "selectedDirection": "A"}, _MINOR],
    True,
)

_READINESS = {
    "id": "readiness_gate",
    "purpose": "Assess readiness before continuing.",
    "dimensions": [
        {
            "id": "confidence",
            "purpose": "How confident the agent is.",
            "levels": ["low", "medium", "high"],
        },
        {
            "id": "scope",
            "purpose": "How complete the understanding is.",
            "levels": ["partial", "complete"],
        },
    ],
}


def assessment(
    test: str, dimensions: dict[str, str], valid: bool, assessment_id: str = "readiness_gate"
):
    case(
        "artifact",
        ASSESSMENT_VALIDATION,
        test,
        workflow={"assessments": [_READINESS]},
        step={"assessmentRefs": ["readiness_gate"]},
        artifacts=[
            {"kind": "wr.assessment", "assessmentId": assessment_id, "dimensions": dimensions}
        ],
        valid=valid,
    )


assessment(
    "accepts canonical assessment artifacts", {"confidence": "high", "scope": "complete"}, True
)
assessment(
    "normalizes safe case-only near misses without failing",
    {"confidence": "HIGH", "scope": "COMPLETE"},
    True,
)
assessment("rejects missing required dimensions", {"confidence": "high"}, False)
assessment(
    "rejects unknown dimension values without silent coercion",
    {"confidence": "very-high", "scope": "complete"},
    False,
)
assessment(
    "rejects artifacts targeting the wrong assessment id",
    {"confidence": "high", "scope": "complete"},
    False,
    "other_gate",
)


# --- walks (successive workflow_next calls) ---------------------------------------------------

_AUDIT_LOOP = {
    "id": "audit-loop",
    "type": "loop",
    "title": "Audit Loop",
    "loop": {
        "type": "while",
        "maxIterations": 5,
        "conditionSource": {
            "kind": "artifact_contract",
            "contractRef": "wr.contracts.loop_control",
            "loopId": "plan_audit_loop",
        },
    },
    "body": [
        {"id": "do-work", "title": "Do Work", "prompt": "Work"},
        {
            "id": "exit-decision",
            "title": "Exit Decision",
            "prompt": "Stop?",
            "outputContract": {"contractRef": "wr.contracts.loop_control"},
        },
    ],
}


def _stop(loop_id: str | None = None, decision: str = "stop") -> dict[str, Any]:
    return {
        "kind": "wr.loop_control",
        "decision": decision,
        **({"loopId": loop_id} if loop_id else {}),
    }


def walk(source: str, test: str, steps: list[Any], calls: list[dict[str, Any]], **more):
    case("walk", source, test, workflow={"steps": steps}, calls=calls, **more)


walk(
    ADVANCE_LOOP,
    "no artifacts at all defaults to continue (first iteration)",
    [_AUDIT_LOOP],
    [{"step": "do-work"}],
)
walk(
    ADVANCE_LOOP,
    "stop artifact from current step exits loop",
    [_AUDIT_LOOP],
    [
        {"step": "do-work"},
        {"step": "exit-decision"},
        {"artifacts": [_stop("plan_audit_loop")], "complete": True},
    ],
)
walk(
    ADVANCE_LOOP,
    "stop artifact with MISMATCHED loopId still exits loop (regression: loopId-agnostic)",
    [_AUDIT_LOOP],
    [
        {"step": "do-work"},
        {"step": "exit-decision"},
        {"artifacts": [_stop("phase-4-plan-iterations")], "complete": True},
    ],
)
walk(
    LOOP_INTERPRETER,
    "exits loop when artifact has no loopId at all and says stop",
    [_AUDIT_LOOP],
    [{"step": "do-work"}, {"step": "exit-decision"}, {"artifacts": [_stop()], "complete": True}],
)
walk(
    LOOP_INTERPRETER,
    "enters loop when artifact says continue",
    [_AUDIT_LOOP],
    [
        {"step": "do-work"},
        {"step": "exit-decision"},
        {"artifacts": [_stop(decision="continue")], "step": "do-work"},
    ],
)
walk(
    LOOP_INTERPRETER,
    "last artifact wins when multiple wr.loop_control artifacts present",
    [_AUDIT_LOOP],
    [
        {"step": "do-work"},
        {"step": "exit-decision"},
        {"artifacts": [_stop(decision="continue"), _stop()], "complete": True},
    ],
)
walk(
    LOOP_INTERPRETER,
    "earlier stop is overridden by later continue",
    [_AUDIT_LOOP],
    [
        {"step": "do-work"},
        {"step": "exit-decision"},
        {"artifacts": [_stop(), _stop(decision="continue")], "step": "do-work"},
    ],
)
_DERIVED_LOOP = {
    "id": "loop-step",
    "type": "loop",
    "title": "Loop",
    "loop": {"type": "while", "maxIterations": 5},
    "body": [
        {"id": "body-step", "title": "Body", "prompt": "Do work"},
        {
            "id": "exit-step",
            "title": "Exit",
            "prompt": "Stop?",
            "outputContract": {"contractRef": "wr.contracts.loop_control"},
        },
    ],
}
walk(
    LOOP_INTERPRETER,
    "derives artifact_contract when body step has outputContract",
    [_DERIVED_LOOP, {"id": "after", "title": "After", "prompt": "Done"}],
    [
        {"step": "body-step"},
        {"step": "exit-step"},
        {"artifacts": [_stop(decision="continue")], "step": "body-step"},
        {"step": "exit-step"},
        {"artifacts": [_stop()], "step": "after"},
    ],
)
_continue = {"artifacts": [_stop(decision="continue")]}
walk(
    PROMPT_RENDERER,
    "final pass shows FINAL PASS instruction",
    [_DERIVED_LOOP],
    [
        {"step": "body-step", "prompt_lacks": ["final pass"]},
        {"step": "exit-step"},
        *[
            call
            for _ in range(3)
            for call in (
                {**_continue, "step": "body-step", "prompt_lacks": ["final pass"]},
                {"step": "exit-step"},
            )
        ],
        {**_continue, "step": "body-step", "prompt_has": ["final pass"]},
        {"step": "exit-step", "prompt_lacks": ["final pass"]},
    ],
    differs="the notice's wording is ours: 'This is the final pass (5 of 5)'",
)

_ROUTINE = {
    "id": "routine-test-design",
    "name": "Test Design Routine",
    "description": "A routine for testing",
    "version": "1.0.0",
    "metaGuidance": ["Be thorough in your analysis."],
    "steps": [
        {
            "id": "step-understand",
            "title": "Understand the Problem",
            "prompt": "Analyze {problem} deeply.",
            "agentRole": "You are a problem analyst.",
        },
        {
            "id": "step-design",
            "title": "Design Solution",
            "prompt": "Design a solution for {problem} and write to {deliverableName}.",
        },
    ],
}
_ROUTINE_TWO_ARGS = {
    "id": "routine-two-args",
    "name": "Two args",
    "steps": [
        {
            "id": "step-deliver",
            "title": "Deliver",
            "prompt": "Create {deliverableName} with {format}.",
        }
    ],
}
_ROUTINE_AB = {
    "id": "routine-ab",
    "name": "A and B",
    "steps": [{"id": "step-one", "title": "Step", "prompt": "Use {a} and {b}."}],
}


def _call(template: str, args: dict[str, Any], step_id: str = "design-phase") -> dict[str, Any]:
    return {
        "id": step_id,
        "title": "Design Phase",
        "templateCall": {"templateId": f"wr.templates.routine.{template}", "args": args},
    }


walk(
    RESOLVE_TEMPLATES,
    "expands routine-based templateCall into routine steps",
    [
        _call(
            "test-design", {"problem": "caching", "deliverableName": "design.md"}, "phase-1-design"
        )
    ],
    [
        {
            "step": "phase-1-design.step-understand",
            "prompt": "Analyze caching deeply.",
            "guidance_has": ["Be thorough in your analysis."],
        },
        {
            "step": "phase-1-design.step-design",
            "prompt": "Design a solution for caching and write to design.md.",
        },
        {"complete": True},
    ],
    routines=[_ROUTINE],
)
walk(
    RESOLVE_TEMPLATES,
    "mixes routine-based and regular steps",
    [
        {"id": "intro", "title": "Introduction", "prompt": "Start here."},
        _call("test-design", {"problem": "auth", "deliverableName": "auth-design.md"}),
        {"id": "implement", "title": "Implement", "prompt": "Build it."},
    ],
    [
        {"step": "intro"},
        {"step": "design-phase.step-understand"},
        {"step": "design-phase.step-design"},
        {"step": "implement"},
        {"complete": True},
    ],
    routines=[_ROUTINE],
)
walk(
    RESOLVE_TEMPLATES,
    "fails when routine templateCall has missing args",
    [_call("test-design", {"problem": "caching"})],
    [{"error": -32002, "problems": ["WR802"], "message_has": ["deliverableName"]}],
    routines=[_ROUTINE],
)
walk(
    TEMPLATE_REGISTRY,
    "fails on missing args with TEMPLATE_EXPAND_FAILED",
    [_call("two-args", {})],
    [{"error": -32002, "problems": ["WR802"], "message_has": ["deliverableName", "format"]}],
    routines=[_ROUTINE_TWO_ARGS],
)
walk(
    TEMPLATE_REGISTRY,
    "fails when only some args are provided",
    [_call("ab", {"a": "alpha"})],
    [{"error": -32002, "problems": ["WR802"], "message_has": ["'b'"]}],
    routines=[_ROUTINE_AB],
)
walk(
    TEMPLATE_REGISTRY,
    "rejects non-primitive arg values (objects would produce [object Object])",
    [_call("ab", {"a": {"nested": True}, "b": "x"})],
    [{"error": -32002, "problems": ["WR803"]}],
    routines=[_ROUTINE_AB],
)
walk(
    TEMPLATE_REGISTRY,
    "accepts number and boolean arg values",
    [_call("ab", {"a": 42, "b": True})],
    [{"step": "design-phase.step-one", "prompt": "Use 42 and true."}],
    routines=[_ROUTINE_AB],
)


# --- lint: which files are valid (workflow_lint and workrail validate) ------------------------


def lint(
    source: str,
    test: str,
    *,
    errors: list[str],
    workflow: Any = None,
    text: str | None = None,
    **more,
):
    case("lint", source, test, workflow=workflow, text=text, errors=sorted(errors), **more)


def _wf(**fields: Any) -> dict[str, Any]:
    return {
        "name": "Upstream case",
        "description": "Ported from upstream's tests",
        "version": "1.0.0",
        "steps": [{"id": "step-1", "title": "Step 1", "prompt": "Assess the situation."}],
        **fields,
    }


lint(
    CONDITIONS,
    "should reject invalid operators",
    errors=["WR102"],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "runCondition": {"var": "test", "invalid": "operator"},
            }
        ]
    ),
)
lint(
    CONDITIONS,
    "should reject invalid operators",
    errors=["WR102"],
    workflow=_wf(
        steps=[
            {"id": "step-1", "title": "S", "prompt": "P", "runCondition": {"badOperator": "value"}}
        ]
    ),
)
lint(
    CONDITIONS,
    "should validate nested conditions",
    errors=["WR102"],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "runCondition": {"and": [{"var": "a", "equals": 1}, {"invalid": "nested"}]},
            }
        ]
    ),
)
lint(
    CONDITIONS,
    "should accept new string matching operators",
    errors=[],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "runCondition": {"var": "test", "matches": "^pattern.*"},
            }
        ]
    ),
)
lint(
    CONDITIONS,
    "should evaluate variable truthiness",
    errors=[],
    workflow=_wf(
        steps=[{"id": "step-1", "title": "S", "prompt": "P", "runCondition": {"var": "enabled"}}]
    ),
)
lint(
    CONDITIONS,
    "should return true for null/undefined conditions",
    errors=[],
    workflow=_wf(steps=[{"id": "step-1", "title": "S", "prompt": "P", "runCondition": {}}]),
)
lint(
    VALIDATION,
    "should use default message when none provided",
    errors=[],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "validationCriteria": [{"type": "contains", "value": "x", "message": ""}],
            }
        ]
    ),
)
lint(
    VALIDATION,
    "should validate empty criteria with non-empty output",
    errors=[],
    warnings=["WR407"],
    workflow=_wf(steps=[{"id": "step-1", "title": "S", "prompt": "P", "validationCriteria": []}]),
)
lint(
    VALIDATION,
    "should throw ValidationError for unsupported rule type",
    errors=["WR104"],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "validationCriteria": [{"type": "unsupported", "message": "Unsupported rule"}],
            }
        ]
    ),
)
lint(
    VALIDATION,
    "should throw ValidationError for invalid rule format",
    errors=["WR101"],
    workflow=_wf(steps=[{"id": "step-1", "title": "S", "prompt": "P", "validationCriteria": [42]}]),
)
lint(
    VALIDATION,
    "should throw ValidationError for invalid regex pattern",
    errors=["WR401"],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "validationCriteria": [
                    {"type": "regex", "pattern": "[invalid", "message": "Invalid regex"}
                ],
            }
        ]
    ),
)
lint(
    VALIDATION,
    "should handle invalid JSON schema definition",
    errors=["WR403"],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "validationCriteria": [
                    {
                        "type": "schema",
                        "schema": {"type": "invalid_type"},
                        "message": "Schema validation failed",
                    }
                ],
            }
        ]
    ),
)

lint(WORKFLOW_JSON, "should reject null input", errors=["WR101"], text="null\n")
lint(WORKFLOW_JSON, "should reject empty string", errors=["WR006"], text="")
lint(WORKFLOW_JSON, "should reject whitespace-only string", errors=["WR006"], text="   \n  \t  ")
lint(WORKFLOW_JSON, "should handle invalid JSON syntax", errors=["WR001"], text="{ invalid json }")
lint(WORKFLOW_JSON, "should handle missing quotes", errors=["WR001"], text="{ id: test }")
lint(WORKFLOW_JSON, "should handle trailing commas", errors=["WR001"], text='{ "id": "test", }')
lint(WORKFLOW_JSON, "should handle unmatched brackets", errors=["WR001"], text='{ "id": "test"')
_JSON_STEP = {"id": "step-1", "title": "Test Step", "prompt": "Do something"}
_JSON_WF = {
    "name": "Test Workflow",
    "description": "A test workflow",
    "version": "0.0.1",
    "steps": [_JSON_STEP],
}
lint(WORKFLOW_JSON, "should validate minimal valid workflow", errors=[], workflow=_JSON_WF)
lint(
    WORKFLOW_JSON,
    "should validate complex valid workflow",
    errors=[],
    workflow={
        "name": "Complex Test Workflow",
        "description": "A complex test workflow with multiple features",
        "version": "1.0.0",
        "preconditions": ["User has access to system"],
        "metaGuidance": ["Follow best practices"],
        "steps": [
            {
                "id": "step-1",
                "title": "First Step",
                "prompt": "Do the first task",
                "guidance": ["Be careful", "Double check"],
                "askForFiles": True,
                "requireConfirmation": False,
                "runCondition": {"var": "complexity", "equals": "high"},
            },
            {"id": "step-2", "title": "Second Step", "prompt": "Do the second task"},
        ],
    },
)
# name and steps are required here; description and version are optional (a superset)
lint(WORKFLOW_JSON, "should detect missing required fields", errors=["WR103"], workflow={})
lint(WORKFLOW_JSON, "should detect missing required property errors", errors=["WR103"], workflow={})
lint(
    WORKFLOW_JSON,
    "should detect invalid field types",
    errors=["WR101", "WR106"],
    workflow={**_JSON_WF, "name": 123, "steps": []},
)
lint(
    WORKFLOW_JSON,
    "should detect invalid ID pattern",
    errors=["WR105"],
    workflow={"id": "Test_Workflow!", **_JSON_WF},
    keep_id=True,
)
lint(
    WORKFLOW_JSON,
    "should detect empty steps array",
    errors=["WR106"],
    workflow={**_JSON_WF, "steps": []},
)
lint(
    WORKFLOW_JSON,
    "should detect invalid version format",
    errors=["WR602"],
    workflow={**_JSON_WF, "version": "invalid-version"},
)
lint(
    WORKFLOW_JSON,
    "should detect additional properties errors",
    errors=["WR102"],
    workflow={**_JSON_WF, "invalidProperty": "should not be here"},
)
lint(
    WORKFLOW_JSON,
    "should validate workflow JSON with declared assessments",
    errors=[],
    workflow=_wf(
        assessments=[
            {
                "id": "readiness_gate",
                "purpose": "Readiness.",
                "dimensions": [
                    {"id": "confidence", "purpose": "Confidence", "levels": ["low", "high"]}
                ],
            }
        ],
        steps=[{"id": "step-1", "title": "S", "prompt": "P", "assessmentRefs": ["readiness_gate"]}],
    ),
)

_REF = {
    "id": "api-schema",
    "title": "API Schema",
    "source": "./spec/api.json",
    "purpose": "Authoritative API contract",
    "authoritative": True,
}
lint(
    REFERENCES,
    "accepts a workflow with well-formed references",
    errors=[],
    workflow=_wf(
        references=[
            _REF,
            {
                **_REF,
                "id": "coding-guide",
                "title": "Coding Guide",
                "source": "./docs/guide.md",
                "authoritative": False,
            },
        ]
    ),
)
lint(
    REFERENCES,
    "accepts a workflow with empty references array",
    errors=[],
    workflow=_wf(references=[]),
)
lint(
    REFERENCES,
    "rejects duplicate reference IDs",
    errors=["WR706"],
    workflow=_wf(references=[{**_REF, "id": "dupe"}, {**_REF, "id": "dupe", "title": "Another"}]),
)
for field in ("id", "source", "title", "purpose"):
    # an empty id breaks both its pattern and its length
    errors = ["WR105", "WR106"] if field == "id" else ["WR106"]
    lint(
        REFERENCES,
        f"rejects reference with empty {field}",
        errors=errors,
        workflow=_wf(references=[{**_REF, field: ""}]),
    )
lint(
    REFERENCES,
    "rejects reference with non-boolean authoritative",
    errors=["WR101"],
    workflow=_wf(references=[{**_REF, "authoritative": "yes"}]),
)

_GATE = {
    "id": "readiness_gate",
    "purpose": "Readiness gate.",
    "dimensions": [{"id": "confidence", "purpose": "Confidence", "levels": ["low", "high"]}],
}


def _assessed(*assessments: Any, refs: list[str], consequences: Any = None) -> dict[str, Any]:
    step: dict[str, Any] = {
        "id": "step-1",
        "title": "Step 1",
        "prompt": "Assess.",
        "assessmentRefs": refs,
    }
    if consequences is not None:
        step["assessmentConsequences"] = consequences
    return _wf(assessments=list(assessments), steps=[step])


def _followup(level: str, assessment_id: str | None = None) -> dict[str, Any]:
    when: dict[str, Any] = {"anyEqualsLevel": level}
    if assessment_id:
        when["forAssessment"] = assessment_id
    return {
        "when": when,
        "effect": {"kind": "require_followup", "guidance": "Fix before proceeding."},
    }


lint(
    ASSESSMENT_DEFINITIONS,
    "accepts valid assessments and step assessmentRefs",
    errors=[],
    workflow=_assessed(_GATE, refs=["readiness_gate"]),
)
lint(
    ASSESSMENT_DEFINITIONS,
    "rejects duplicate assessment ids",
    errors=["WR707"],
    workflow=_wf(
        assessments=[
            {**_GATE, "id": "dup_gate"},
            {**_GATE, "id": "dup_gate", "purpose": "Second copy."},
        ]
    ),
)
lint(
    ASSESSMENT_DEFINITIONS,
    "rejects undeclared step assessmentRefs",
    errors=["WR702"],
    workflow=_assessed(_GATE, refs=["missing_gate"]),
)
_QUALITY = {
    "id": "quality_gate",
    "purpose": "Quality gate.",
    "dimensions": [{"id": "depth", "purpose": "Depth", "levels": ["shallow", "deep"]}],
}
_COVERAGE = {
    "id": "coverage_gate",
    "purpose": "Coverage gate.",
    "dimensions": [{"id": "completeness", "purpose": "Completeness", "levels": ["low", "high"]}],
}
lint(
    ASSESSMENT_DEFINITIONS,
    "accepts multiple assessmentRefs with a consequence whose trigger level exists only in the second assessment",
    errors=[],
    workflow=_assessed(
        _QUALITY, _COVERAGE, refs=["quality_gate", "coverage_gate"], consequences=[_followup("low")]
    ),
)
lint(
    ASSESSMENT_DEFINITIONS,
    "rejects a multi-ref consequence whose trigger level exists in neither referenced assessment",
    errors=["WR708"],
    workflow=_assessed(
        _QUALITY,
        {
            **_COVERAGE,
            "dimensions": [
                {"id": "completeness", "purpose": "C", "levels": ["partial", "complete"]}
            ],
        },
        refs=["quality_gate", "coverage_gate"],
        consequences=[_followup("low")],
    ),
)
lint(
    ASSESSMENT_DEFINITIONS,
    "rejects a consequence that references an undeclared level",
    errors=["WR708"],
    workflow=_assessed(_GATE, refs=["readiness_gate"], consequences=[_followup("unknown_level")]),
)
lint(
    ASSESSMENT_DEFINITIONS,
    "fails fast on invalid assessment consequence level at compile time",
    errors=["WR708"],
    workflow=_assessed(_GATE, refs=["readiness_gate"], consequences=[_followup("medium")]),
)
lint(
    ASSESSMENT_DEFINITIONS,
    "accepts multiple assessment consequences on the same step",
    errors=[],
    workflow=_assessed(
        {**_GATE, "id": "constraint_gate"},
        {**_GATE, "id": "type_gate"},
        refs=["constraint_gate", "type_gate"],
        consequences=[_followup("low", "constraint_gate"), _followup("low", "type_gate")],
    ),
)
lint(
    ASSESSMENT_DEFINITIONS,
    "fails fast when forAssessment references an unknown assessmentRef",
    errors=["WR702"],
    workflow=_assessed(
        _GATE, refs=["readiness_gate"], consequences=[_followup("low", "unknown_gate")]
    ),
)
lint(
    ASSESSMENT_DEFINITIONS,
    "fails fast on unknown assessmentRef in inline loop body steps",
    errors=["WR702"],
    workflow=_wf(
        assessments=[_GATE],
        steps=[
            {
                "id": "loop-1",
                "type": "loop",
                "title": "Loop",
                "loop": {"type": "for", "count": 2},
                "body": [
                    {
                        "id": "inner",
                        "title": "Inner",
                        "prompt": "P",
                        "assessmentRefs": ["missing_gate"],
                    }
                ],
            }
        ],
    ),
)


def _delegating(*workflow_ids: str) -> list[dict[str, Any]]:
    return [
        {
            "id": "parallel-step",
            "title": "Run Subagent",
            "type": "parallel",
            "parallelDelegations": [{"workflowId": w} for w in workflow_ids],
        }
    ]


lint(
    PARALLEL,
    "rejects a parallel step with missing delegations",
    errors=["WR103"],
    workflow=_wf(steps=[{"id": "parallel-gate-1", "title": "Spawn Subagents", "type": "parallel"}]),
)
lint(
    PARALLEL,
    "rejects mixing prompt or loop configs on a parallel step type",
    errors=["WR102"],
    workflow=_wf(
        steps=[
            {
                "id": "parallel-gate-1",
                "title": "Spawn Subagents",
                "type": "parallel",
                "prompt": "Do not mix prompts here.",
                "parallelDelegations": [{"workflowId": "up-subagent-workflow"}],
            }
        ]
    ),
    others=[_wf(id="up-subagent-workflow")],
)
lint(
    PARALLEL,
    "passes registry validation when all referenced workflows exist",
    errors=[],
    workflow=_wf(steps=_delegating("up-subagent-workflow")),
    others=[_wf(id="up-subagent-workflow")],
)
lint(
    PARALLEL,
    "fails registry validation when a subagent ID is unregistered",
    errors=["WR709"],
    workflow=_wf(steps=_delegating("missing-subagent-workflow")),
)
lint(
    PARALLEL,
    "fails registry validation when a workflow delegates to itself (circular prevention)",
    errors=["WR710"],
    workflow=_wf(id="up-circular-workflow", steps=_delegating("up-circular-workflow")),
    keep_id=True,
)
lint(
    PARALLEL,
    "fails registry validation when a transitive cycle is detected (e.g. A -> B -> A)",
    errors=["WR710"],
    workflow=_wf(id="up-workflow-a", steps=_delegating("up-workflow-b")),
    others=[_wf(id="up-workflow-b", steps=_delegating("up-workflow-a"))],
    keep_id=True,
    files_together=True,
)
lint(
    IN_OPERATOR,
    "rejects an unknown operator alongside in",
    errors=["WR102"],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "runCondition": {"var": "mode", "unknown_op": "value"},
            }
        ]
    ),
)
lint(
    IN_OPERATOR,
    "accepts in as a supported operator without throwing",
    errors=[],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "runCondition": {"var": "mode", "in": ["A", "B"]},
            }
        ]
    ),
)

FRAGMENT_CHECKS = "unit/compiler/prompt-fragments-validation.test.ts"


def _fragmented(fragments: list[Any]) -> dict[str, Any]:
    return _wf(
        steps=[
            {
                "id": "step-1",
                "title": "Step 1",
                "prompt": "Base prompt.",
                "promptFragments": fragments,
            }
        ]
    )


lint(
    FRAGMENT_CHECKS,
    "accepts a step with well-formed promptFragments",
    errors=[],
    workflow=_fragmented(
        [
            {
                "id": "quick-fragment",
                "when": {"var": "rigorMode", "equals": "QUICK"},
                "text": "Keep it light.",
            },
            {
                "id": "deep-fragment",
                "when": {"var": "rigorMode", "in": ["STANDARD", "THOROUGH"]},
                "text": "Go deeper.",
            },
        ]
    ),
)
lint(
    FRAGMENT_CHECKS,
    "accepts a fragment without a when condition (always-include)",
    errors=[],
    workflow=_fragmented([{"id": "always", "text": "Always appended."}]),
)
lint(
    FRAGMENT_CHECKS,
    "rejects duplicate fragment ids within the same step",
    errors=["WR704"],
    workflow=_fragmented([{"id": "frag-a", "text": "First."}, {"id": "frag-a", "text": "Second."}]),
)
lint(
    FRAGMENT_CHECKS,
    "rejects a fragment with empty text",
    errors=["WR106"],
    workflow=_fragmented([{"id": "frag", "text": ""}]),
)
for test, text in [
    (
        "rejects a fragment text containing a {{wr.*}} token",
        "Delegate to {{wr.bindings.design_review}}.",
    ),
    ("rejects any {{wr.X}} variant", "Use {{wr.refs.philosophy_preamble}} here."),
]:
    case(
        "walk",
        FRAGMENT_CHECKS,
        test,
        workflow={
            "steps": [
                {
                    "id": "step-1",
                    "title": "Step 1",
                    "prompt": "Base prompt.",
                    "promptFragments": [{"id": "bad", "text": text}],
                }
            ]
        },
        calls=[{"error": -32002, "problems": ["WR808"]}],
    )

# Assessment consequences through workflow_validate: a consequence that fires keeps the step
# pending with its guidance (an issue); the assessments' level lists are ours (upstream's test
# hands over recorded ratings only), holding every level the test rates.
CONSEQUENCES = "unit/mcp/assessment-consequences.test.ts"
_ANY_LEVELS = ["low", "medium", "high", "unsound", "sound"]


def consequence(
    test: str, ratings: dict[str, dict[str, str]], consequences: list[Any], fires: list[str]
):
    assessments = [
        {
            "id": gate,
            "purpose": f"{gate} purpose",
            "dimensions": [{"id": dim, "purpose": dim, "levels": _ANY_LEVELS} for dim in dims],
        }
        for gate, dims in ratings.items()
    ]
    unfired = [
        c["effect"]["guidance"] for c in consequences if c["effect"]["guidance"] not in fires
    ]
    case(
        "artifact",
        CONSEQUENCES,
        test,
        workflow={"assessments": assessments},
        step={"assessmentRefs": list(ratings), "assessmentConsequences": consequences},
        artifacts=[
            {"kind": "wr.assessment", "assessmentId": gate, "dimensions": dims}
            for gate, dims in ratings.items()
        ],
        valid=not fires,
        issues_have=fires,
        issues_lack=unfired,
    )


def _when(level: str, guidance: str, gate: str | None = None) -> dict[str, Any]:
    when: dict[str, Any] = {"anyEqualsLevel": level}
    if gate:
        when["forAssessment"] = gate
    return {"when": when, "effect": {"kind": "require_followup", "guidance": guidance}}


_GATHER = [_when("low", "Gather more context before proceeding.")]
consequence(
    "fires when the single dimension equals the level",
    {"readiness_gate": {"confidence": "low"}},
    _GATHER,
    ["Gather more context before proceeding."],
)
consequence(
    "returns empty array when the dimension does not match",
    {"readiness_gate": {"confidence": "high"}},
    _GATHER,
    [],
)
_ADDRESS = [_when("low", "Address all low dimensions before proceeding.")]
_THREE = ("evidence_quality", "coverage_completeness", "contradiction_resolution")
consequence(
    "fires when the first dimension is low",
    {"readiness_gate": dict(zip(_THREE, ["low", "high", "high"], strict=True))},
    _ADDRESS,
    ["Address all low dimensions before proceeding."],
)
consequence(
    "fires when a non-first dimension is low",
    {"readiness_gate": dict(zip(_THREE, ["high", "low", "high"], strict=True))},
    _ADDRESS,
    ["Address all low dimensions before proceeding."],
)
consequence(
    "returns empty array when all dimensions are high",
    {"readiness_gate": dict(zip(_THREE, ["high", "high", "high"], strict=True))},
    _ADDRESS,
    [],
)
_FIX = [_when("low", "Fix before proceeding.")]
consequence(
    "fires on the matching assessment when multiple refs are present",
    {"quality_gate": {"depth": "high"}, "coverage_gate": {"completeness": "low"}},
    _FIX,
    ["Fix before proceeding."],
)
consequence(
    "returns empty array when all dimensions across multiple refs are high",
    {"quality_gate": {"depth": "high"}, "coverage_gate": {"completeness": "high"}},
    _FIX,
    [],
)
consequence(
    "fires all matching consequences independently",
    {"constraint_gate": {"specificity": "low"}, "type_gate": {"soundness": "unsound"}},
    [
        _when("low", "Rewrite vague constraints."),
        _when("unsound", "Redesign unsound types as explicit variants."),
    ],
    ["Rewrite vague constraints.", "Redesign unsound types as explicit variants."],
)
consequence(
    "fires only the consequences whose level matches",
    {"gate_a": {"quality": "low"}, "gate_b": {"soundness": "sound"}},
    [_when("low", "Fix low."), _when("unsound", "Fix unsound.")],
    ["Fix low."],
)
consequence(
    "returns empty array when no consequence level matches",
    {"gate_a": {"quality": "high"}},
    [_when("low", "Fix."), _when("unsound", "Redesign.")],
    [],
)
consequence(
    "fires only the consequence scoped to the assessment that matched",
    {"constraint_gate": {"specificity": "low"}, "type_gate": {"soundness": "high"}},
    [
        _when("low", "Fix constraint specificity.", "constraint_gate"),
        _when("low", "Redesign unsound types.", "type_gate"),
    ],
    ["Fix constraint specificity."],
)
consequence(
    "fires both scoped consequences when both assessments match",
    {"constraint_gate": {"specificity": "low"}, "type_gate": {"soundness": "low"}},
    [_when("low", "Fix constraints.", "constraint_gate"), _when("low", "Fix types.", "type_gate")],
    ["Fix constraints.", "Fix types."],
)
consequence(
    "does not fire a scoped consequence for an assessment that scored high",
    {"gate_a": {"quality": "high"}},
    [_when("low", "Fix gate_a.", "gate_a")],
    [],
)

LOOPS = "unit/loop-validation.test.ts"
_BODY = {"id": "loop-body", "title": "Loop Body", "prompt": "Do something"}
_WHILE = {"type": "while", "condition": {"var": "counter", "lt": 10}, "maxIterations": 100}


# Upstream's test builds loop steps with a `prompt`, which its schema (and ours) refuses on a
# loop step: the files here leave it out.
def _looped(
    spec: dict[str, Any], body: Any = "loop-body", more: list[Any] | None = None
) -> dict[str, Any]:
    loop = {
        "id": "test-loop",
        "type": "loop",
        "title": "Test Loop",
        "loop": spec,
        "body": body,
    }
    return _wf(steps=[_BODY, *(more or []), loop])


lint(LOOPS, "should validate a valid while loop", errors=[], workflow=_looped(_WHILE))
# The warning on the file itself (upstream's suggestion at validation time is its wording: WR409
# says it before the workflow is served).
lint(
    LOOPS,
    "should warn when validationCriteria.message contains quoted JSON snippets (agent confusion risk)",
    errors=[],
    warnings=["WR409"],
    workflow=_wf(
        steps=[
            {
                "id": "step1",
                "title": "Step 1",
                "prompt": "First",
                "validationCriteria": [
                    {"type": "contains", "value": "state", "message": _QUOTED_JSON_MESSAGE}
                ],
            }
        ]
    ),
)
lint(
    LOOPS,
    "should reject invalid loop type",
    errors=["WR104"],
    workflow=_looped({**_WHILE, "type": "invalid"}),
)
lint(
    LOOPS,
    "should reject missing maxIterations",
    errors=[],
    workflow=_looped({"type": "while", "condition": {"var": "counter", "lt": 10}}),
    differs="maxIterations is optional here (default 100)",
)
lint(
    LOOPS,
    "should reject excessive maxIterations",
    errors=["WR106"],
    workflow=_looped({**_WHILE, "maxIterations": 2000}),
)
lint(
    LOOPS,
    "should reject while loop with neither condition nor conditionSource",
    errors=["WR203"],
    workflow=_looped({"type": "while", "maxIterations": 100}),
)
lint(
    LOOPS,
    "should accept while loop with conditionSource and no condition field",
    errors=[],
    workflow=_looped(
        {
            "type": "while",
            "conditionSource": {
                "kind": "artifact_contract",
                "contractRef": "wr.contracts.loop_control",
                "loopId": "my-loop",
            },
            "maxIterations": 5,
        }
    ),
)
lint(
    LOOPS,
    "should validate for loop with count",
    errors=[],
    workflow=_looped({"type": "for", "count": 5, "maxIterations": 10}),
)
lint(
    LOOPS,
    "should validate for loop with context variable",
    errors=[],
    workflow=_looped({"type": "for", "count": "itemCount", "maxIterations": 10}),
)
lint(
    LOOPS,
    "should reject for loop without count",
    errors=["WR205"],
    workflow=_looped({"type": "for", "maxIterations": 10}),
)
lint(
    LOOPS,
    "should validate forEach loop",
    errors=[],
    workflow=_looped({"type": "forEach", "items": "arrayItems", "maxIterations": 100}),
)
lint(
    LOOPS,
    "should reject forEach loop without items",
    errors=["WR205"],
    workflow=_looped({"type": "forEach", "maxIterations": 100}),
)
lint(
    LOOPS,
    "should reject non-existent body step",
    errors=["WR202"],
    workflow=_looped(_WHILE, body="non-existent"),
)
lint(
    LOOPS,
    "should reject nested loops",
    errors=["WR204"],
    workflow=_looped(
        _WHILE,
        body="nested-loop",
        more=[
            {
                "id": "nested-loop",
                "type": "loop",
                "title": "Nested Loop",
                "loop": {"type": "while", "condition": {"var": "x", "lt": 5}, "maxIterations": 10},
                "body": "loop-body",
            }
        ],
    ),
)
lint(
    LOOPS,
    "should validate custom variable names",
    errors=[],
    workflow=_looped(
        {**_WHILE, "iterationVar": "myCounter", "itemVar": "currentItem", "indexVar": "idx"}
    ),
)
lint(
    LOOPS,
    "should reject invalid variable names",
    errors=["WR105"],
    workflow=_looped(
        {**_WHILE, "iterationVar": "123invalid", "itemVar": "my-item", "indexVar": "idx space"}
    ),
)

BLOCKS = "unit/compiler/prompt-blocks.test.ts"


def blocks(test: str, prompt_blocks: dict[str, Any], **expected: Any) -> None:
    step = {"id": "step-1", "title": "Step 1", "promptBlocks": prompt_blocks}
    walk(BLOCKS, test, [step], [{"step": "step-1", **expected}])


blocks(
    "renders goal-only blocks",
    {"goal": "Investigate the bug."},
    prompt="## Goal\nInvestigate the bug.",
)
blocks(
    "renders all sections in deterministic order",
    {
        "goal": "Find the root cause.",
        "constraints": ["Follow the selected mode.", "Do not skip steps."],
        "procedure": ["Gather evidence.", "Test hypotheses."],
        "outputRequired": {"notesMarkdown": "Summary of findings."},
        "verify": ["Root cause is grounded in evidence."],
    },
    in_order=["## Goal", "## Constraints", "## Procedure", "## Output Required", "## Verify"],
)
blocks(
    "renders constraints as bullet points",
    {"constraints": ["Rule A.", "Rule B."]},
    prompt_contains=["- Rule A.", "- Rule B."],
)
blocks(
    "renders procedure as numbered steps",
    {"procedure": ["Step one.", "Step two.", "Step three."]},
    prompt_contains=["1. Step one.", "2. Step two.", "3. Step three."],
)
blocks(
    "renders outputRequired as key-value pairs",
    {"outputRequired": {"notesMarkdown": "Recap.", "artifacts": "Loop control."}},
    prompt_contains=["**notesMarkdown**: Recap.", "**artifacts**: Loop control."],
)
blocks(
    "renders text PromptPart arrays by concatenation",
    {"goal": [{"kind": "text", "text": "Part A. "}, {"kind": "text", "text": "Part B."}]},
    prompt="## Goal\nPart A. Part B.",
)
blocks(
    "skips empty optional sections",
    {"goal": "Do the thing.", "constraints": [], "procedure": []},
    prompt="## Goal\nDo the thing.",
)
walk(
    BLOCKS,
    "returns EMPTY_BLOCKS error for empty blocks",
    [{"id": "step-1", "title": "Step 1", "promptBlocks": {}}],
    [{"error": -32002, "problems": ["WR810"]}],
)
walk(
    BLOCKS,
    "returns UNRESOLVED_REF error for unresolved ref parts",
    [
        {
            "id": "step-1",
            "title": "Step 1",
            "promptBlocks": {
                "goal": [
                    {"kind": "text", "text": "Before. "},
                    {"kind": "ref", "refId": "wr.refs.some_snippet"},
                ]
            },
        }
    ],
    [{"error": -32002, "problems": ["WR806"], "message_has": ["wr.refs.some_snippet"]}],
)
walk(
    BLOCKS,
    "returns error when step has both prompt and promptBlocks",
    [{"id": "step-1", "title": "Step 1", "prompt": "Raw.", "promptBlocks": {"goal": "Blocks."}}],
    [{"error": -32002, "problems": ["WR810"]}],
)
walk(
    BLOCKS,
    "handles mixed steps (some with prompt, some with promptBlocks)",
    [
        {"id": "step-1", "title": "Step 1", "prompt": "Raw prompt."},
        {"id": "step-2", "title": "Step 2", "promptBlocks": {"goal": "Blocks goal."}},
    ],
    [
        {"step": "step-1", "prompt": "Raw prompt."},
        {"step": "step-2", "prompt": "## Goal\nBlocks goal."},
    ],
)

# A rule without its operand: upstream's schema takes it (only type and message are required);
# no output passes it, and the linter warns (WR408).
output(
    "should handle undefined value",
    [{"type": "contains", "message": "Must contain value"}],
    "hello world",
    False,
    issues=["Must contain value"],
)
output(
    "should handle schema rule without schema property",
    [{"type": "schema", "message": "Schema validation failed"}],
    "hello world",
    False,
    issues=["Schema validation failed"],
)
lint(
    VALIDATION,
    "should handle undefined value",
    errors=[],
    warnings=["WR408"],
    workflow=_wf(
        steps=[
            {
                "id": "step-1",
                "title": "S",
                "prompt": "P",
                "validationCriteria": [{"type": "contains", "message": "Must contain value"}],
            }
        ]
    ),
)

NEXT_CONTRACT = "contract/mcp-workflow-next.contract.test.ts"


def _for_loop(count: int, max_iterations: int) -> list[Any]:
    # upstream's fixture gives the loop step a prompt, which its schema refuses: left out here
    return [
        {
            "id": "loop",
            "type": "loop",
            "title": "Loop",
            "loop": {"type": "for", "count": count, "maxIterations": max_iterations},
            "body": [{"id": "body", "title": "Body", "prompt": "Do the body step"}],
        }
    ]


walk(
    NEXT_CONTRACT,
    "advances loop iteration when completing the pending step",
    _for_loop(2, 10),
    [
        {"step": "body", "loop_iteration": 1},
        {"step": "body", "loop_iteration": 2},
        {"complete": True},
    ],
)
walk(
    NEXT_CONTRACT,
    "loop exits naturally when maxIterations bound is reached",
    _for_loop(5, 2),
    [{"step": "body"}, {"step": "body"}, {"complete": True}],
)
walk(
    NEXT_CONTRACT,
    "rejects invalid events deterministically",
    _for_loop(2, 10),
    [{"step": "body"}, {"completed": ["not-body"], "error": -32003}],
)

FOREACH_CONTEXT = "unit/workflow-interpreter-foreach-missing-context.test.ts"
_GATE_THEN_FOREACH = [
    {
        "id": "gate-step",
        "title": "Planning Gate",
        "prompt": "Confirm planning is complete. Set: planningComplete = true",
        "requireConfirmation": True,
    },
    {
        "id": "impl-loop",
        "type": "loop",
        "title": "Implementation Loop",
        "loop": {
            "type": "forEach",
            "items": "slices",
            "itemVar": "currentSlice",
            "indexVar": "sliceIndex",
            "maxIterations": 20,
        },
        "body": [
            {
                "id": "impl-step",
                "title": "Implement Slice",
                "prompt": "Implement {{currentSlice.name}}",
            }
        ],
    },
]
walk(
    FOREACH_CONTEXT,
    "returns MissingContext error when forEach items variable is not set",
    _GATE_THEN_FOREACH,
    [{"step": "gate-step"}, {"error": -32005, "message_has": ["impl-loop", "slices"]}],
)
walk(
    FOREACH_CONTEXT,
    "succeeds when forEach items variable is set as array",
    _GATE_THEN_FOREACH,
    [
        {"step": "gate-step"},
        {
            "context_add": {"slices": [{"name": "Slice 1"}, {"name": "Slice 2"}]},
            "step": "impl-step",
            "prompt": "Implement Slice 1",
        },
    ],
)
walk(
    FOREACH_CONTEXT,
    "treats empty array as valid (skips loop)",
    _GATE_THEN_FOREACH,
    [{"step": "gate-step"}, {"context_add": {"slices": []}, "complete": True}],
)

RUN_CONDITION_TRACE = "unit/workflow-interpreter-run-condition-trace.test.ts"
_SMALL_OR_NOT = [
    {"id": "step-unconditional", "title": "Unconditional Step", "prompt": "Always runs"},
    {
        "id": "step-small",
        "title": "Small Task Path",
        "prompt": "For small tasks",
        "runCondition": {"var": "taskComplexity", "equals": "Small"},
    },
    {
        "id": "step-non-small",
        "title": "Non-Small Task Path",
        "prompt": "For non-small tasks",
        "runCondition": {"var": "taskComplexity", "not_equals": "Small"},
    },
]
# Upstream's trace entries are internal; what an agent sees of them is the step served and the
# steps skipped on the way (`skipped`).
walk(
    RUN_CONDITION_TRACE,
    "after unconditional step completes, with taskComplexity=Medium: step-small skipped, step-non-small selected",
    _SMALL_OR_NOT,
    [
        {"context_add": {"taskComplexity": "Medium"}, "step": "step-unconditional"},
        {"step": "step-non-small", "skipped_has": ["step-small"]},
    ],
)
walk(
    RUN_CONDITION_TRACE,
    "with taskComplexity=Small: step-non-small skipped, step-small selected",
    _SMALL_OR_NOT,
    [
        {"context_add": {"taskComplexity": "Small"}, "step": "step-unconditional"},
        {"step": "step-small"},
        {"complete": True, "skipped_has": ["step-non-small"]},
    ],
)

# The same checks through upstream's MCP tool (workflow_validate_json; ours is workflow_lint). Its
# invalid-id case repeats validate-workflow-json's id, which two files checked together may not
# share (WR603): that case is validate-workflow-json's above.
VALIDATE_JSON_TOOL = "unit/mcp-server-workflow-validate-json.test.ts"
lint(VALIDATE_JSON_TOOL, "should validate a valid workflow JSON", errors=[], workflow=_JSON_WF)
lint(VALIDATE_JSON_TOOL, "should reject invalid workflow JSON", errors=["WR103"], workflow={})
lint(VALIDATE_JSON_TOOL, "should handle malformed JSON", errors=["WR001"], text="{ invalid json }")
lint(VALIDATE_JSON_TOOL, "should handle empty workflow JSON", errors=["WR006"], text="")
