"""The workflow JSON Schema: valid 2020-12, accepts the specs' examples, rejects bad input precisely.

Every instance is checked by both validators we care about: jsonschema-rs (the engine's) and
python-jsonschema (what check-jsonschema, the benchmark peer, runs). They must agree on where
each error is, or the benchmark's "same errors" comparison and the editors' squiggles diverge.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import jsonschema_rs
import pytest

from workrail_engine.schema import SCHEMA_ID, load_schema, schema_path

FIXTURES = Path(__file__).parent.parent / "fixtures" / "spec"

PROMPT_STEP = {"id": "first", "title": "First", "prompt": "Do it."}
WORKFLOW = {"id": "demo-flow", "name": "Demo", "steps": [PROMPT_STEP]}


def workflow(**top):
    result = copy.deepcopy(WORKFLOW)
    result.update(top)
    return result


def with_step(step):
    return workflow(steps=[step])


def prompt(**fields):
    return with_step({**PROMPT_STEP, **fields})


def command(**fields):
    return with_step({"id": "build", "run": {"command": ["make"], "timeoutSeconds": 60}, **fields})


def loop(config, **fields):
    return with_step(
        {"id": "repeat", "type": "loop", "loop": config, "body": [PROMPT_STEP], **fields}
    )


def parallel(**fields):
    return with_step({"id": "group", "type": "parallel", "steps": [PROMPT_STEP], **fields})


def condition(value):
    return prompt(runCondition=value)


def criteria(value):
    return prompt(validationCriteria=value)


def rust_paths(instance, schema=None):
    validator = jsonschema_rs.validator_for(schema or load_schema())
    return sorted(tuple(error.instance_path) for error in validator.iter_errors(instance))


def python_paths(instance, schema=None):
    validator = jsonschema.Draft202012Validator(schema or load_schema())
    return sorted(tuple(error.absolute_path) for error in validator.iter_errors(instance))


# --- the schema itself ---------------------------------------------------------------------------


def test_schema_is_a_valid_2020_12_schema():
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema_rs.meta.validate(schema)


def test_schema_identity_and_loader():
    schema = load_schema()
    assert schema["$id"] == SCHEMA_ID == "https://workrail.dev/schema/workflow.schema.json"
    assert schema["title"]
    assert schema_path().is_file()
    assert json.loads(schema_path().read_text(encoding="utf-8")) == schema
    assert load_schema() is schema  # cached


def test_importing_the_schema_module_does_not_import_a_validator():
    code = "import sys, workrail_engine.schema as s; s.load_schema(); print(sorted(m for m in sys.modules if 'jsonschema' in m))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout


def test_condition_operators_match_the_evaluator():
    from workrail_engine.evaluation.conditions import OPERATORS

    comparison = load_schema()["$defs"]["comparison"]
    assert set(comparison["properties"]) - {"var"} == set(OPERATORS)
    assert len(OPERATORS) == len(set(OPERATORS))


def _schema_nodes(node, pointer=""):
    """Every subschema with its JSON pointer; skips values that are data, not schemas."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from _schema_nodes(item, f"{pointer}/{index}")
        return
    if not isinstance(node, dict):
        return
    yield pointer, node
    for key, value in node.items():
        if key in ("defaultSnippets", "examples", "default", "const", "enum", "enumDescriptions"):
            continue
        if key in ("properties", "$defs"):
            for name, child in value.items():
                yield from _schema_nodes(child, f"{pointer}/{key}/{name}")
        elif isinstance(value, (dict, list)):
            yield from _schema_nodes(value, f"{pointer}/{key}")


def _property_nodes():
    for pointer, node in _schema_nodes(load_schema()):
        if "/if" in pointer:  # discriminators of if/then/else, never shown to a user
            continue
        for name, child in node.get("properties", {}).items():
            yield f"{pointer}/properties/{name}", child


def test_every_property_is_documented():
    properties = list(_property_nodes())
    assert len(properties) > 80
    missing = [
        (pointer, key)
        for pointer, child in properties
        for key in ("title", "description", "markdownDescription")
        if not (isinstance(child.get(key), str) and child[key].strip())
    ]
    assert missing == []


def test_every_enum_has_one_description_per_value():
    enums = [(p, n) for p, n in _schema_nodes(load_schema()) if "enum" in n and "/if" not in p]
    assert {p.rsplit("/", 1)[-1] for p, _ in enums} >= {"type", "onFailure"}
    for pointer, node in enums:
        assert len(node.get("enumDescriptions", [])) == len(node["enum"]), pointer


def _resolve_placeholders(body):
    text = json.dumps(body)
    return json.loads(re.sub(r"\$\{\d+:([^}]*)\}", r"\1", text))


def _snippets():
    schema = load_schema()
    for pointer, node in _schema_nodes(schema):
        for snippet in node.get("defaultSnippets", []):
            yield pytest.param(pointer, snippet, id=f"{pointer}:{snippet.get('label')}")


@pytest.mark.parametrize(("pointer", "snippet"), list(_snippets()))
def test_default_snippets_are_well_formed_and_valid(pointer, snippet):
    assert set(snippet) == {"label", "description", "body"}
    schema = load_schema()
    sub = {
        "$schema": schema["$schema"],
        "$id": SCHEMA_ID,
        "$defs": schema["$defs"],
        "$ref": f"#{pointer}",
    }
    body = _resolve_placeholders(snippet["body"])
    assert rust_paths(body, sub) == []
    assert python_paths(body, sub) == []


def test_snippets_cover_steps_loops_rules_and_conditions():
    labels = {
        pointer: {s["label"] for s in node.get("defaultSnippets", [])}
        for pointer, node in _schema_nodes(load_schema())
    }
    assert {"prompt step", "command step", "parallel group", "loop"} <= labels["/$defs/step"]
    assert {"forEach loop", "while loop", "until loop", "for loop"} <= labels[
        "/$defs/loopStep/properties/loop"
    ]
    assert {
        "contains rule",
        "regex rule",
        "length rule",
        "schema rule",
        "and composition",
        "or composition",
        "not composition",
    } <= labels["/$defs/criterion"]
    assert {"equals", "and", "or", "not"} <= labels["/$defs/condition"]


# --- the specs' examples -------------------------------------------------------------------------


def _as_workflow(fixture):
    example = fixture["example"]
    kind = fixture["kind"]
    if kind == "workflow":
        return example
    if kind == "step":
        return with_step(example)
    if kind == "step-fields":
        return prompt(**example)
    if kind == "criteria":
        return criteria(example)
    raise AssertionError(f"unknown fixture kind {kind!r}")


SPEC_FIXTURES = sorted(FIXTURES.glob("*.json"))


def test_every_spec_fixture_is_present():
    assert len(SPEC_FIXTURES) == 9
    kinds = {json.loads(p.read_text(encoding="utf-8"))["kind"] for p in SPEC_FIXTURES}
    assert kinds == {"workflow", "step", "step-fields", "criteria"}


@pytest.mark.parametrize("path", SPEC_FIXTURES, ids=lambda p: p.stem)
def test_spec_examples_validate_with_both_validators(path):
    fixture = json.loads(path.read_text(encoding="utf-8"))
    instance = _as_workflow(fixture)
    assert rust_paths(instance) == []
    assert python_paths(instance) == []


DOCS = Path(__file__).parent.parent.parent / "docs" / "workflow-format.md"


def test_the_format_docs_example_validates_and_is_lint_clean():
    from workrail_engine.lint import lint_text

    blocks = re.findall(r"```json\n(.*?)\n```", DOCS.read_text(encoding="utf-8"), re.S)
    examples = [json.loads(block) for block in blocks if '"steps"' in block]
    assert examples
    for example in examples:
        assert rust_paths(example) == []
        assert python_paths(example) == []
        assert lint_text(json.dumps(example, indent=2)).diagnostics == []


# --- good and bad input --------------------------------------------------------------------------

S0 = ("steps", 0)
COND = (*S0, "runCondition")
CRIT = (*S0, "validationCriteria")

VALID = [
    pytest.param(WORKFLOW, id="minimal"),
    pytest.param(
        workflow(
            **{
                "$schema": SCHEMA_ID,
                "version": "1.0.0",
                "category": "development",
                "tags": ["x"],
                "preconditions": ["p"],
                "clarificationPrompts": ["c"],
                "metaGuidance": ["m"],
                "timeoutSeconds": 60,
            }
        ),
        id="all-top-level-fields",
    ),
    pytest.param(
        workflow(
            parameters={
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
            secrets=["PYPI_TOKEN", "_X1"],
        ),
        id="parameters-and-secrets",
    ),
    pytest.param(
        prompt(
            type="prompt",
            agentRole="r",
            guidance=["g"],
            askForFiles=True,
            requireConfirmation=False,
            modelHint="model-with-strong-reasoning",
        ),
        id="prompt-step-all-fields",
    ),
    pytest.param(command(), id="command-step-without-type"),
    pytest.param(
        command(
            type="command",
            title="Build",
            retry={"maxAttempts": 3, "delaySeconds": 0, "backoff": 1},
            onFailure="retry",
            idempotent=False,
            sandbox=True,
            run={
                "command": ["python", "-m", "pytest", ""],
                "cwd": "src",
                "env": {"TOKEN": "{{secrets.T}}"},
                "timeoutSeconds": 0.5,
            },
        ),
        id="command-step-all-fields",
    ),
    pytest.param(
        parallel(
            title="Checks",
            parallelLimit=2,
            runCondition={"var": "ci", "equals": True},
            steps=[PROMPT_STEP, {"id": "lint", "run": {"command": ["ruff"]}}],
        ),
        id="parallel-group",
    ),
    pytest.param(
        loop(
            {"type": "while", "condition": {"var": "more", "equals": True}, "maxIterations": 1000}
        ),
        id="while-loop",
    ),
    pytest.param(
        loop(
            {
                "type": "until",
                "condition": {"var": "done", "equals": True},
                "iterationVar": "attempt",
            }
        ),
        id="until-loop",
    ),
    pytest.param(loop({"type": "for", "count": 3, "maxIterations": 1}), id="for-loop"),
    pytest.param(
        loop({"type": "forEach", "items": "files", "itemVar": "file", "indexVar": "i"}),
        id="foreach-over-context",
    ),
    pytest.param(
        loop({"type": "forEach", "items": [1, 2]}, body="first"), id="foreach-inline-body-id"
    ),
    pytest.param(
        condition(
            {
                "and": [
                    {"var": "a", "equals": 1},
                    {"or": [{"var": "b.c", "gt": 2}, {"not": {"var": "d", "in": [1]}}]},
                ]
            }
        ),
        id="nested-condition",
    ),
    *(
        pytest.param(condition({"var": "x", op: value}), id=f"operator-{op}")
        for op, value in [
            ("equals", "a"),
            ("equals", None),
            ("not_equals", [1]),
            ("gt", 1),
            ("gte", 0.5),
            ("lt", -1),
            ("lte", 10),
            ("in", ["a", 1]),
            ("contains", "x"),
            ("contains", 3),
            ("startsWith", "release/"),
            ("endsWith", ".py"),
            ("matches", "^a+$"),
        ]
    ),
    pytest.param(
        criteria(
            {
                "type": "contains",
                "value": "x",
                "message": "m",
                "condition": {"var": "s", "equals": "large"},
            }
        ),
        id="contains-rule",
    ),
    pytest.param(
        criteria({"type": "regex", "pattern": "^a", "flags": "ims", "message": "m"}),
        id="regex-rule-with-flags",
    ),
    pytest.param(
        criteria({"type": "length", "min": 0, "max": 10, "message": "m"}), id="length-rule"
    ),
    pytest.param(
        criteria({"type": "schema", "schema": {"type": "object"}, "message": "m"}), id="schema-rule"
    ),
    pytest.param(
        criteria(
            [
                {"type": "length", "max": 5, "message": "m"},
                {"or": [{"type": "contains", "value": "a", "message": "m"}], "message": "any"},
                {
                    "not": {"and": [{"type": "contains", "value": "b", "message": "m"}]},
                    "message": "none",
                },
            ]
        ),
        id="criteria-array-with-compositions",
    ),
]


@pytest.mark.parametrize("instance", VALID)
def test_valid_workflows(instance):
    assert rust_paths(instance) == []
    assert python_paths(instance) == []


CMD_STEP = {"id": "build", "run": {"command": ["make"]}}

INVALID = [
    pytest.param(workflow(stepz=[]), [()], id="unknown-top-level-key"),
    pytest.param(workflow(version=1), [("version",)], id="version-not-a-string"),
    pytest.param({"id": "demo-flow", "steps": [PROMPT_STEP]}, [()], id="missing-name"),
    pytest.param(workflow(id="Demo_Flow"), [("id",)], id="workflow-id-pattern"),
    pytest.param(workflow(id="ab"), [("id",)], id="workflow-id-too-short"),
    pytest.param(workflow(id="a" * 65), [("id",)], id="workflow-id-too-long"),
    pytest.param(workflow(steps=[]), [("steps",)], id="no-steps"),
    pytest.param(workflow(steps=["Do the thing."]), [S0], id="step-not-an-object"),
    pytest.param(workflow(secrets=["pypi_token"]), [("secrets", 0)], id="secret-name-lowercase"),
    pytest.param(
        workflow(parameters={"type": "array"}),
        [("parameters", "type")],
        id="parameters-not-object-schema",
    ),
    pytest.param(prompt(agentRol="x"), [S0], id="unknown-prompt-step-key"),
    pytest.param(with_step({"id": "first", "title": "First"}), [S0], id="prompt-missing-prompt"),
    pytest.param(prompt(id="First"), [(*S0, "id")], id="step-id-pattern"),
    pytest.param(prompt(type="comand"), [(*S0, "type")], id="wrong-step-type"),
    pytest.param(
        prompt(requireConfirmation="yes"),
        [(*S0, "requireConfirmation")],
        id="confirmation-not-boolean",
    ),
    pytest.param(prompt(run={"command": ["make"]}), [S0], id="prompt-type-with-run"),
    pytest.param(command(prompt="p"), [S0], id="command-step-with-prompt"),
    pytest.param(command(timeout=5), [S0], id="unknown-command-step-key"),
    pytest.param(with_step({"id": "build", "type": "command"}), [S0], id="command-missing-run"),
    pytest.param(command(run={"command": []}), [(*S0, "run", "command")], id="empty-argv"),
    pytest.param(
        command(run={"command": "make test"}), [(*S0, "run", "command")], id="argv-is-a-string"
    ),
    pytest.param(
        command(run={"command": ["", "x"]}), [(*S0, "run", "command", 0)], id="empty-program"
    ),
    pytest.param(
        command(run={"command": ["make"], "shell": True}), [(*S0, "run")], id="unknown-run-key"
    ),
    pytest.param(
        command(run={"command": ["make"], "env": {"A": 1}}),
        [(*S0, "run", "env", "A")],
        id="env-value-not-string",
    ),
    pytest.param(
        command(run={"command": ["make"], "timeoutSeconds": 0}),
        [(*S0, "run", "timeoutSeconds")],
        id="timeout-zero",
    ),
    pytest.param(command(onFailure="explode"), [(*S0, "onFailure")], id="wrong-on-failure"),
    pytest.param(
        command(retry={"maxAttempts": 0}), [(*S0, "retry", "maxAttempts")], id="retry-zero-attempts"
    ),
    pytest.param(
        command(retry={"backoff": 0.5}), [(*S0, "retry", "backoff")], id="retry-backoff-below-one"
    ),
    pytest.param(
        command(retry={"delaySeconds": -1}),
        [(*S0, "retry", "delaySeconds")],
        id="retry-negative-delay",
    ),
    pytest.param(parallel(parallelLimit=0), [(*S0, "parallelLimit")], id="parallel-limit-zero"),
    pytest.param(parallel(steps=[]), [(*S0, "steps")], id="parallel-without-steps"),
    pytest.param(parallel(steps=[42]), [(*S0, "steps", 0)], id="member-not-an-object"),
    pytest.param(
        parallel(steps=[{"id": "inner", "type": "loop"}]),
        [(*S0, "steps", 0, "type")],
        id="loop-inside-parallel",
    ),
    pytest.param(
        parallel(steps=[{**CMD_STEP, "onFailure": "x"}]),
        [(*S0, "steps", 0, "onFailure")],
        id="bad-member-command",
    ),
    pytest.param(loop({"type": "repeat"}), [(*S0, "loop", "type")], id="wrong-loop-type"),
    pytest.param(loop({"type": "for"}), [(*S0, "loop")], id="for-without-count"),
    pytest.param(loop({"type": "forEach"}), [(*S0, "loop")], id="foreach-without-items"),
    pytest.param(loop({"type": "for", "count": -1}), [(*S0, "loop", "count")], id="count-negative"),
    pytest.param(
        loop({"type": "for", "count": ""}), [(*S0, "loop", "count")], id="count-empty-variable-name"
    ),
    pytest.param(
        loop({"type": "for", "count": 1.5}), [(*S0, "loop", "count")], id="count-not-an-integer"
    ),
    pytest.param(
        loop({"type": "for", "count": 2, "maxIterations": 1001}),
        [(*S0, "loop", "maxIterations")],
        id="max-iterations-too-high",
    ),
    pytest.param(
        loop({"type": "for", "count": 2, "maxIterations": 0}),
        [(*S0, "loop", "maxIterations")],
        id="max-iterations-zero",
    ),
    pytest.param(
        loop({"type": "for", "count": 2, "itemVar": "1x"}),
        [(*S0, "loop", "itemVar")],
        id="item-var-not-identifier",
    ),
    pytest.param(
        loop({"type": "for", "count": 2}, body="Not An Id"), [(*S0, "body")], id="body-bad-step-id"
    ),
    pytest.param(loop({"type": "for", "count": 2}, steps=[]), [S0], id="loop-unknown-key"),
    pytest.param(
        condition({"var": "x", "equals": 1, "gt": 2}), [COND], id="condition-two-operators"
    ),
    # {"var": "x"} alone (truthiness) and {} are upstream's and valid; an operator needs var.
    pytest.param(condition({"equals": 1}), [COND], id="condition-without-var"),
    pytest.param(condition({"var": "x", "greater": 1}), [COND], id="condition-unknown-operator"),
    pytest.param(condition({"var": "x", "gt": "5"}), [(*COND, "gt")], id="gt-with-a-string"),
    pytest.param(condition({"var": "x", "lte": True}), [(*COND, "lte")], id="lte-with-a-boolean"),
    pytest.param(condition({"var": "x", "in": "abc"}), [(*COND, "in")], id="in-without-a-list"),
    pytest.param(
        condition({"var": "x", "startsWith": 1}), [(*COND, "startsWith")], id="starts-with-a-number"
    ),
    pytest.param(condition({"var": "", "equals": 1}), [(*COND, "var")], id="empty-var"),
    pytest.param(
        condition({"and": [{"var": "a", "equals": 1}, {"equals": 2}]}),
        [(*COND, "and", 1)],
        id="bad-condition-inside-and",
    ),
    pytest.param(condition({"or": []}), [(*COND, "or")], id="empty-or"),
    pytest.param(condition({"not": "x"}), [(*COND, "not")], id="not-of-a-string"),
    pytest.param(
        condition({"not": {"var": "a", "equals": 1}, "extra": 1}), [COND], id="not-with-extra-key"
    ),
    pytest.param(condition("taskScope == large"), [COND], id="condition-as-string"),
    pytest.param(
        criteria({"type": "lenght", "message": "m"}), [(*CRIT, "type")], id="wrong-rule-type"
    ),
    pytest.param(criteria({"type": "contains", "value": "x"}), [CRIT], id="rule-missing-message"),
    pytest.param(criteria({"value": "x", "message": "m"}), [CRIT], id="rule-missing-type"),
    pytest.param(
        criteria({"type": "contains", "value": "x", "message": "m", "flags": "i"}),
        [CRIT],
        id="flags-on-contains-rule",
    ),
    # a rule without its operand is upstream's and valid (WR408 warns); a wrong operand is not
    pytest.param(
        criteria({"type": "regex", "pattern": 3, "message": "m"}),
        [(*CRIT, "pattern")],
        id="regex-pattern-not-a-string",
    ),
    pytest.param(
        criteria({"type": "regex", "pattern": "a", "flags": "g", "message": "m"}),
        [(*CRIT, "flags")],
        id="regex-unknown-flag",
    ),
    pytest.param(
        criteria({"type": "length", "min": -1, "message": "m"}),
        [(*CRIT, "min")],
        id="length-negative-min",
    ),
    pytest.param(
        criteria({"type": "schema", "schema": "object", "message": "m"}),
        [(*CRIT, "schema")],
        id="schema-rule-schema-not-object",
    ),
    pytest.param(
        criteria(
            {"type": "contains", "value": "x", "message": "m", "condition": {"var": "a", "lt": "b"}}
        ),
        [(*CRIT, "condition", "lt")],
        id="rule-condition-lt-with-a-string",
    ),
    pytest.param(
        criteria({"and": [{"type": "contains", "value": "x", "message": "m"}], "messages": "x"}),
        [CRIT],
        id="composition-unknown-key",
    ),
    pytest.param(criteria({"and": []}), [(*CRIT, "and")], id="empty-and-composition"),
    pytest.param(
        criteria({"not": {"type": "contains", "value": "", "message": "m"}}),
        [(*CRIT, "not", "value")],
        id="bad-rule-inside-not",
    ),
    pytest.param(
        criteria(
            [
                {"type": "length", "max": 1, "message": "m"},
                {"type": "regex", "pattern": 3, "message": "m"},
            ]
        ),
        [(*CRIT, 1, "pattern")],
        id="bad-rule-in-array",
    ),
    pytest.param(criteria(["has tests"]), [(*CRIT, 0)], id="rule-not-an-object"),
    pytest.param(criteria("must contain tests"), [CRIT], id="criteria-as-string"),
]


@pytest.mark.parametrize(("instance", "expected"), INVALID)
def test_invalid_workflows_report_the_same_paths_in_both_validators(instance, expected):
    expected = sorted(expected)
    assert rust_paths(instance) == expected
    assert python_paths(instance) == expected


# --- upstream WorkRail's constructs (our fixtures) --------------------------------------------

UPSTREAM = FIXTURES.parent / "upstream"


@pytest.mark.parametrize(
    "path",
    sorted((UPSTREAM / "workflows").rglob("*.json")),
    ids=lambda p: p.name,
)
def test_upstream_construct_fixtures_are_valid_in_both_validators(path):
    instance = json.loads(path.read_text())
    assert rust_paths(instance) == python_paths(instance) == []


_SCHEMA_CODES = ("WR102", "WR103", "WR104", "WR105", "WR106")


@pytest.mark.parametrize(
    "path",
    [p for p in sorted((UPSTREAM / "invalid").glob("*.json")) if p.stem.startswith(_SCHEMA_CODES)],
    ids=lambda p: p.stem,
)
def test_invalid_upstream_constructs_fail_in_both_validators_at_the_same_place(path):
    instance = json.loads(path.read_text())
    found = rust_paths(instance)
    assert found and found == python_paths(instance)
