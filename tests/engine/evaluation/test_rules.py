"""The output-validation engine: rules, compositions, conditions, suggestions and static problems."""

from __future__ import annotations

import pytest
from boolean_trees import boolean_trees
from hypothesis import given, settings
from hypothesis import strategies as st

from workrail_engine.errors import InvalidCriteria, InvalidParams
from workrail_engine.evaluation.rules import criteria_problems, describe_criteria, validate_output

AUTH = {"type": "contains", "value": "authentication", "message": "Must include authentication"}
JWT = {"type": "contains", "value": "jwt", "message": "Should use JWT"}
SESSION = {"type": "contains", "value": "session", "message": "Should use sessions"}
SPEC_COMPOSITION = {"and": [AUTH, {"or": [JWT, SESSION]}]}
API_SCHEMA = {
    "type": "schema",
    "schema": {
        "type": "object",
        "properties": {
            "endpoint": {"type": "string", "pattern": "^/api/"},
            "method": {"type": "string", "enum": ["GET", "POST", "PUT", "DELETE"]},
            "authentication": {"type": "boolean"},
        },
        "required": ["endpoint", "method"],
    },
    "message": "API endpoint must follow required structure",
}
LARGE_ONLY = {
    "type": "contains",
    "value": "comprehensive tests",
    "condition": {"var": "taskScope", "equals": "large"},
    "message": "Large tasks require comprehensive testing",
}


@pytest.mark.parametrize(
    ("criteria", "output", "issues", "suggestions"),
    [
        pytest.param(AUTH, "uses authentication", [], [], id="contains-pass"),
        pytest.param(
            AUTH,
            "uses Authentication",
            ["Must include authentication"],
            ['Include "authentication" in the output.'],
            id="contains-case-sensitive",
        ),
        pytest.param(
            {"type": "regex", "pattern": r"\b401\b", "message": "Say what happens on bad tokens"},
            "returns 4011",
            ["Say what happens on bad tokens"],
            [r"Make the output match /\b401\b/."],
            id="regex-fail",
        ),
        pytest.param(
            {"type": "regex", "pattern": "^jwt", "flags": "im", "message": "m"},
            "x\nJWT here",
            [],
            [],
            id="regex-flags",
        ),
        pytest.param(
            {"type": "length", "min": 10, "max": 20, "message": "Between 10 and 20 characters"},
            "short",
            ["Between 10 and 20 characters"],
            ["Lengthen the output to at least 10 characters (it has 5)."],
            id="length-too-short",
        ),
        pytest.param(
            {"type": "length", "max": 3, "message": "At most 3"},
            "four",
            ["At most 3"],
            ["Shorten the output to at most 3 characters (it has 4)."],
            id="length-too-long",
        ),
        pytest.param(
            {"type": "length", "min": 2, "max": 2, "message": "m"},
            "é!",
            [],
            [],
            id="length-counts-code-points",
        ),
        pytest.param(
            SPEC_COMPOSITION,
            "authentication with JWT... no: jwt",
            [],
            [],
            id="spec-composition-pass",
        ),
        pytest.param(
            SPEC_COMPOSITION,
            "nothing relevant",
            ["Must include authentication", "none of: Should use JWT; Should use sessions"],
            [
                'Include "authentication" in the output.',
                'Satisfy at least one of: (1) Include "jwt" in the output. (2) Include "session" in the output.',
            ],
            id="spec-composition-fails-with-every-message",
        ),
        pytest.param(
            {"or": [JWT, SESSION], "message": "Pick an auth mechanism"},
            "basic auth",
            ["Pick an auth mechanism", "none of: Should use JWT; Should use sessions"],
            [
                'Satisfy at least one of: (1) Include "jwt" in the output. (2) Include "session" in the output.'
            ],
            id="or-message-comes-with-the-alternatives",
        ),
        pytest.param(
            {"or": [{"and": [AUTH, JWT]}, SESSION]},
            "x",
            ["none of: (Must include authentication; Should use JWT); Should use sessions"],
            [
                'Satisfy at least one of: (1) Include "authentication" in the output. Include "jwt" in the output. (2) Include "session" in the output.'
            ],
            id="or-of-and-groups-alternatives",
        ),
        pytest.param(
            {"and": [AUTH, JWT], "message": "Auth section incomplete"},
            "jwt only",
            ["Auth section incomplete", "Must include authentication"],
            ['Include "authentication" in the output.'],
            id="and-message-plus-failing-rules",
        ),
        pytest.param(
            {"not": {"type": "contains", "value": "TODO", "message": "Mentions TODO"}},
            "left a TODO",
            ["must not: Mentions TODO"],
            ['Remove "TODO" from the output.'],
            id="not-without-message",
        ),
        pytest.param(
            {
                "not": {"type": "regex", "pattern": "(?i)lorem", "message": "Placeholder text"},
                "message": "Remove placeholder text",
            },
            "Lorem ipsum",
            ["Remove placeholder text"],
            ["Change the output so that it no longer matches /(?i)lorem/."],
            id="not-with-message",
        ),
        pytest.param(
            {"not": {"type": "length", "min": 1, "max": 5, "message": "Tiny"}},
            "abc",
            ["must not: Tiny"],
            ["Make the output shorter than 1 or longer than 5 characters."],
            id="not-length",
        ),
        pytest.param(
            {"not": {"or": [JWT, SESSION]}},
            "jwt",
            ["must not: (Should use JWT or Should use sessions)"],
            [
                "Change the output so that this no longer holds: (Should use JWT or Should use sessions)."
            ],
            id="not-of-composition-names-its-rules",
        ),
        pytest.param(
            [AUTH, JWT],
            "authentication",
            ["Should use JWT"],
            ['Include "jwt" in the output.'],
            id="array-is-and",
        ),
        pytest.param(None, "anything", [], [], id="no-criteria"),
    ],
)
def test_validate_output(criteria, output: str, issues: list[str], suggestions: list[str]) -> None:
    result = validate_output(criteria, output)
    assert result.valid is (not issues)
    assert result.issues == issues
    assert result.suggestions == suggestions


def test_schema_rule_reports_the_validators_messages_with_paths() -> None:
    result = validate_output(API_SCHEMA, '{"endpoint": "/users", "method": "PATCH"}')
    assert not result.valid
    (issue,) = result.issues
    assert issue.startswith("API endpoint must follow required structure (")
    assert 'at /endpoint: "/users" does not match "^/api/"' in issue
    assert 'at /method: "PATCH" is not one of' in issue
    assert result.suggestions == [
        "Fix the value at /endpoint in the JSON output.",
        "Fix the value at /method in the JSON output.",
    ]


def test_schema_rule_names_a_missing_property_at_the_top_level() -> None:
    result = validate_output(API_SCHEMA, '{"endpoint": "/api/x"}')
    assert result.issues == [
        'API endpoint must follow required structure (at the top level: "method" is a required property)'
    ]


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        pytest.param(
            "Created the endpoint /api/users", "Expecting value at line 1 column 1", id="prose"
        ),
        pytest.param(
            '{"endpoint": "/api/x", "method": "GET"} done',
            "Extra data at line 1 column 41",
            id="trailing-prose",
        ),
        pytest.param(
            '{"endpoint": "/api/a", "endpoint": "/api/b", "method": "GET"}',
            "duplicate key 'endpoint'",
            id="duplicate-key",
        ),
        pytest.param(
            '{"endpoint": "/api/a", "method": "GET", "n": NaN}', "NaN is not JSON", id="nan"
        ),
        pytest.param(
            '{"endpoint": "/api/a", "method": "GET", "n": 1e400}',
            "1e400 is too large for a JSON number",
            id="huge-float",
        ),
    ],
)
def test_schema_rule_on_output_that_is_not_json(output: str, reason: str) -> None:
    result = validate_output(API_SCHEMA, output)
    assert result.issues == [
        f"API endpoint must follow required structure (the output is not JSON: {reason})"
    ]
    assert result.suggestions == [
        "Return the output as one JSON document, with nothing before or after it."
    ]


@pytest.mark.parametrize(
    "output",
    [
        pytest.param('  {"endpoint": "/api/x", "method": "GET"}\n', id="surrounding-whitespace"),
        pytest.param('```json\n{"endpoint": "/api/x", "method": "GET"}\n```', id="fenced-json"),
        pytest.param('```\n{"endpoint": "/api/x", "method": "GET"}\n```\n', id="fenced-plain"),
    ],
)
def test_schema_rule_accepts_json(output: str) -> None:
    assert validate_output(API_SCHEMA, output).valid


def test_schema_rule_patterns_run_in_linear_time() -> None:
    rule = {"type": "schema", "schema": {"type": "string", "pattern": "^(a+)+$"}, "message": "m"}
    result = validate_output(
        rule, '"' + "a" * 50_000 + 'b"'
    )  # would not finish with a backtracking engine
    assert not result.valid


@pytest.mark.parametrize(
    ("context", "valid", "issues"),
    [
        pytest.param(
            {"taskScope": "large"},
            False,
            ["Large tasks require comprehensive testing"],
            id="condition-holds",
        ),
        pytest.param({"taskScope": "small"}, True, [], id="condition-fails-rule-skipped"),
        pytest.param({}, True, [], id="missing-variable-rule-skipped"),
        pytest.param(None, True, [], id="no-context-rule-skipped"),
    ],
)
def test_context_aware_rules(context, valid: bool, issues: list[str]) -> None:
    result = validate_output([LARGE_ONLY, AUTH], "authentication, basic tests", context)
    assert (result.valid, result.issues) == (valid, issues)


def test_skipped_rules_count_neither_way_in_compositions() -> None:
    skipped_only = {"or": [LARGE_ONLY]}
    assert validate_output(skipped_only, "x", {"taskScope": "small"}).valid
    assert validate_output({"not": LARGE_ONLY}, "comprehensive tests", {"taskScope": "small"}).valid
    # an or whose only applicable alternative fails still fails: skipped alternatives do not rescue it
    result = validate_output({"or": [LARGE_ONLY, JWT]}, "x", {"taskScope": "small"})
    assert result.issues == ["none of: Should use JWT"]


def test_spec_context_aware_example() -> None:
    criteria = [
        {
            "type": "contains",
            "value": "Strategy",
            "condition": {"var": "userExpertise", "equals": "expert"},
            "message": "Expert implementation should use advanced patterns",
        },
        {
            "type": "contains",
            "value": "optimiz",
            "condition": {"var": "complexity", "gt": 0.7},
            "message": "Complex tasks require optimization considerations",
        },
        {
            "type": "contains",
            "value": "tests",
            "condition": {"var": "taskScope", "equals": "small"},
            "message": "Small tasks need tests",
        },
    ]
    context = {"userExpertise": "expert", "complexity": 0.9, "taskScope": "large"}
    result = validate_output(
        criteria, "Implemented basic feature functionality with standard patterns.", context
    )
    assert result.issues == [
        "Expert implementation should use advanced patterns",
        "Complex tasks require optimization considerations",
    ]


@pytest.mark.parametrize(
    ("criteria", "expected"),
    [
        pytest.param(
            {"type": "regex", "pattern": "(a", "message": "m"},
            [("/pattern", "WR401")],
            id="bad-regex",
        ),
        pytest.param(
            {"type": "regex", "pattern": r"(\w+) \1", "message": "m"},
            [],  # RE2 cannot run it; the time-limited fallback does (lint warns: WR405)
            id="backreference-falls-back",
        ),
        pytest.param(
            {"type": "regex", "pattern": r"(\w+ \1", "message": "m"},
            [("/pattern", "WR401")],
            id="broken-backreference",
        ),
        pytest.param(
            {"type": "regex", "pattern": "a", "flags": "gi", "message": "m"},
            [("/flags", "WR402")],
            id="bad-flags",
        ),
        pytest.param(
            {"type": "schema", "schema": {"type": "objekt"}, "message": "m"},
            [("/schema/type", "WR403")],
            id="bad-schema-type",
        ),
        pytest.param(
            {"type": "schema", "schema": {"minLength": -1}, "message": "m"},
            [("/schema/minLength", "WR403")],
            id="bad-schema-minimum",
        ),
        pytest.param(
            {
                "type": "schema",
                "schema": {"properties": {"a": {"pattern": "(?<=x)"}}},
                "message": "m",
            },
            [("/schema/properties/a/pattern", "WR403")],
            id="schema-lookbehind",
        ),
        pytest.param(
            {"type": "schema", "schema": {"$ref": "#/$defs/nope"}, "message": "m"},
            [("/schema", "WR403")],
            id="schema-dangling-ref",
        ),
        pytest.param(
            {"type": "schema", "schema": {"$ref": "https://example.com/s.json"}, "message": "m"},
            [("/schema/$ref", "WR406")],
            id="schema-remote-ref-not-fetched",
        ),
        pytest.param(
            {"type": "schema", "schema": {"$schema": "https://example.com/meta"}, "message": "m"},
            [("/schema/$schema", "WR403")],
            id="schema-unknown-meta",
        ),
        pytest.param(
            {"type": "schema", "schema": "object", "message": "m"},
            [("/schema", "WR402")],
            id="schema-not-object",
        ),
        pytest.param(
            {"type": "contains", "value": 5, "message": "m"},
            [("/value", "WR402")],
            id="contains-number",
        ),
        pytest.param(
            {"type": "length", "min": "10", "message": "m"}, [("/min", "WR402")], id="length-string"
        ),
        pytest.param(
            {"type": "length", "max": True, "message": "m"}, [("/max", "WR402")], id="length-bool"
        ),
        pytest.param(
            {"type": "length", "min": 9, "max": 3, "message": "m"},
            [("/min", "WR404")],
            id="length-empty-range",
        ),
        pytest.param({"type": "contains", "value": "x"}, [("", "WR400")], id="missing-message"),
        pytest.param(
            {"type": "grep", "value": "x", "message": "m"}, [("/type", "WR400")], id="unknown-type"
        ),
        pytest.param(
            {"type": "contains", "value": "x", "message": "m", "pattern": "x"},
            [("/pattern", "WR400")],
            id="foreign-key",
        ),
        pytest.param({"and": [], "message": "m"}, [("/and", "WR400")], id="empty-and"),
        pytest.param(["contains x"], [("/0", "WR400")], id="string-rule"),
        pytest.param({"value": "x", "message": "m"}, [("", "WR400")], id="no-type"),
        pytest.param(
            [
                AUTH,
                {
                    "or": [
                        JWT,
                        {
                            "type": "contains",
                            "value": "x",
                            "message": "m",
                            "condition": {"var": "n", "gt": "1"},
                        },
                    ]
                },
            ],
            [("/1/or/1/condition/gt", "WR402")],
            id="condition-problem-prefixed",
        ),
        pytest.param(
            {"not": {"type": "regex", "pattern": "(?!x", "message": "m"}},
            [("/not/pattern", "WR401")],
            id="inside-not",
        ),
        pytest.param(SPEC_COMPOSITION, [], id="spec-composition-is-clean"),
        pytest.param(API_SCHEMA, [], id="spec-schema-is-clean"),
        pytest.param(LARGE_ONLY, [], id="spec-context-rule-is-clean"),
    ],
)
def test_criteria_problems(criteria, expected: list[tuple[str, str]]) -> None:
    assert [(p.pointer, p.code) for p in criteria_problems(criteria)] == expected


def test_invalid_criteria_raise_with_every_problem() -> None:
    criteria = [
        {"type": "regex", "pattern": "(", "message": "m"},
        {"type": "length", "min": -1, "message": "m"},
    ]
    with pytest.raises(InvalidCriteria) as caught:
        validate_output(criteria, "x")
    error = caught.value
    assert error.code == -32004
    assert [p["pointer"] for p in error.data["problems"]] == ["/0/pattern", "/1/min"]
    assert "/0/pattern: Invalid regular expression '('" in error.message


@pytest.mark.parametrize(
    ("output", "context"),
    [
        pytest.param(b"bytes", None, id="bytes-output"),
        pytest.param("x", ["not", "a", "mapping"], id="list-context"),
    ],
)
def test_invalid_params(output, context) -> None:
    with pytest.raises(InvalidParams):
        validate_output(AUTH, output, context)


def test_describe_criteria() -> None:
    assert describe_criteria(SPEC_COMPOSITION) == [
        'Must include authentication (the output contains "authentication")',
        'At least one of: Should use JWT (the output contains "jwt"); Should use sessions (the output contains "session")',
    ]
    assert describe_criteria(API_SCHEMA) == [
        "API endpoint must follow required structure (the output is JSON matching the step's schema with endpoint, method)"
    ]
    assert describe_criteria(
        {"type": "length", "min": 50, "max": 500, "message": "A short summary"}
    ) == ["A short summary (the output is 50 to 500 characters long)"]
    assert describe_criteria({"not": JWT}) == [
        'Must not hold: Should use JWT (the output contains "jwt")'
    ]
    assert describe_criteria(
        {"type": "regex", "pattern": "^#", "flags": "m", "message": "Has a heading"}
    ) == ["Has a heading (the output matches /^#/m)"]


def test_describe_criteria_follows_the_context() -> None:
    assert describe_criteria([LARGE_ONLY, AUTH], {"taskScope": "small"}) == [
        'Must include authentication (the output contains "authentication")'
    ]
    assert describe_criteria([LARGE_ONLY], {"taskScope": "large"}) == [
        'Large tasks require comprehensive testing (the output contains "comprehensive tests")'
    ]
    assert describe_criteria([LARGE_ONLY]) == [
        'Large tasks require comprehensive testing (the output contains "comprehensive tests"; only when taskScope is "large")'
    ]
    assert describe_criteria(None) == []
    with pytest.raises(InvalidCriteria):
        describe_criteria({"type": "regex", "pattern": "(", "message": "m"})


# --- property-based -------------------------------------------------------------------------

words = st.sampled_from(["api", "jwt", "auth", "JWT", "tests", "é", "x"])
outputs = st.lists(words, max_size=6).map(" ".join) | st.text(max_size=30)
messages = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(str.strip)
conditions = st.sampled_from([None, {"var": "scope", "equals": "large"}, {"var": "level", "gt": 2}])


def _with(rule: dict, message: str, condition) -> dict:
    rule = {**rule, "message": message}
    if condition is not None:
        rule["condition"] = condition
    return rule


leaf_rules = st.one_of(
    st.builds(
        lambda v, m, c: _with({"type": "contains", "value": v}, m, c), words, messages, conditions
    ),
    st.builds(
        lambda p, f, m, c: _with({"type": "regex", "pattern": p, "flags": f}, m, c),
        st.sampled_from(["^api", "jwt$", r"\d", "a.t", "(a+)+$"]),
        st.sampled_from(["", "i", "ms"]),
        messages,
        conditions,
    ),
    st.builds(
        lambda lo, hi, m, c: _with(
            {
                "type": "length",
                **({"min": lo} if lo is not None else {}),
                **({"max": hi} if hi is not None else {}),
            },
            m,
            c,
        ),
        st.none() | st.integers(0, 20),
        st.none() | st.integers(20, 40),
        messages,
        conditions,
    ),
)
criteria_trees = boolean_trees(leaf_rules)
contexts = st.fixed_dictionaries(
    {}, optional={"scope": st.sampled_from(["large", "small"]), "level": st.integers(0, 4)}
)


def _holds_alone(rule: dict, output: str) -> bool:
    return validate_output({k: v for k, v in rule.items() if k != "condition"}, output).valid


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(st.lists(leaf_rules, min_size=1, max_size=5), outputs, contexts)
def test_issues_are_exactly_the_failing_rules_messages(
    rules: list[dict], output: str, context: dict
) -> None:
    from workrail_engine.evaluation.conditions import evaluate

    failing = [
        r["message"]
        for r in rules
        if evaluate(r.get("condition"), context) and not _holds_alone(r, output)
    ]
    result = validate_output(rules, output, context)
    assert result.issues == failing
    assert result.valid is (not failing)
    assert len(result.suggestions) <= len(failing)  # one per failing rule, duplicates merged


def _leaves(node: dict) -> list[dict]:
    if "type" in node:
        return [node]
    children = node.get("and") or node.get("or") or [node["not"]]
    return [leaf for child in children for leaf in _leaves(child)]


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(criteria_trees, outputs, contexts)
def test_rule_and_its_negation_disagree_unless_skipped(
    criteria: dict, output: str, context: dict
) -> None:
    from workrail_engine.evaluation.conditions import evaluate

    applies = any(evaluate(leaf.get("condition"), context) for leaf in _leaves(criteria))
    plain = validate_output(criteria, output, context)
    negated = validate_output({"not": criteria}, output, context)
    if applies:
        assert plain.valid is not negated.valid
    else:  # every rule skipped: nothing counts either way
        assert plain.valid and negated.valid


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(criteria_trees, outputs, contexts)
def test_failures_always_carry_issues_from_the_criteria(
    criteria: dict, output: str, context: dict
) -> None:
    result = validate_output(criteria, output, context)
    assert result.valid is (not result.issues)
    for issue in result.issues:
        assert "composition failed" not in issue.lower()
        assert issue.strip()


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(criteria_trees)
def test_generated_criteria_are_clean_and_describable(criteria: dict) -> None:
    assert criteria_problems(criteria) == []
    assert all(isinstance(line, str) and line for line in describe_criteria(criteria))


@settings(deadline=None, max_examples=200)
@given(st.text(max_size=60), st.none() | st.integers(0, 60), st.none() | st.integers(0, 60))
def test_length_rule_agrees_with_len(output: str, low, high) -> None:
    rule = {"type": "length", "message": "len"}
    if low is not None:
        rule["min"] = low
    if high is not None:
        rule["max"] = high
    if low is not None and high is not None and low > high:
        assert [p.code for p in criteria_problems(rule)] == ["WR404"]
        return
    expected = (low is None or len(output) >= low) and (high is None or len(output) <= high)
    assert validate_output(rule, output).valid is expected


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(st.text(max_size=40), words)
def test_contains_agrees_with_substring(output: str, value: str) -> None:
    rule = {"type": "contains", "value": value, "message": "m"}
    assert validate_output(rule, output).valid is (value in output)


# --- the schema and the engine accept the same criteria ---------------------------------------


def _criteria_schema():
    import jsonschema_rs

    from workrail_engine.schema import load_schema

    defs = load_schema()["$defs"]
    return jsonschema_rs.validator_for(
        {"$defs": defs, "$ref": "#/$defs/validationCriteria"}, offline=True
    )


CRITERIA_SCHEMA = _criteria_schema()
odd_rules = st.sampled_from(
    [
        {"type": "contains", "value": 5, "message": "m"},
        {"type": "contains", "value": "", "message": "m"},
        {"type": "contains", "value": "x"},
        {"type": "contains", "value": "x", "message": ""},
        {"type": "contains", "value": "x", "message": "m", "flags": "i"},
        {"type": "regex", "pattern": "(", "message": "m"},
        {"type": "regex", "pattern": "a", "flags": "g", "message": "m"},
        {"type": "length", "min": -1, "message": "m"},
        {"type": "length", "min": "3", "message": "m"},
        {"type": "length", "min": 5, "max": 1, "message": "m"},
        {"type": "schema", "schema": "object", "message": "m"},
        {"type": "schema", "schema": {"type": "objekt"}, "message": "m"},
        {"type": "schema", "message": "m"},
        {"type": "grep", "value": "x", "message": "m"},
        {"value": "x", "message": "m"},
        {"type": "contains", "value": "x", "message": "m", "condition": {"var": "a", "gt": "1"}},
        {"type": "contains", "value": "x", "message": "m", "condition": {"var": "a", "eq": 1}},
        {"and": [], "message": "m"},
        {"or": [{"type": "contains", "value": "x", "message": "m"}], "message": ""},
        {
            "not": {"type": "contains", "value": "x", "message": "m"},
            "condition": {"var": "a", "equals": 1},
        },
        "contains x",
    ]
)
any_criteria = st.one_of(
    criteria_trees, odd_rules, st.lists(criteria_trees | odd_rules, max_size=3)
)


@settings(deadline=None, max_examples=150)
@given(any_criteria)
def test_schema_and_engine_agree_on_what_is_valid_criteria(criteria) -> None:
    # RE2 syntax (WR401), JSON Schema meta-validation (WR403) and min > max (WR404) are beyond a
    # JSON Schema; every other problem must be one the workflow schema reports too, and vice versa.
    structural = [
        p for p in criteria_problems(criteria) if p.code not in ("WR401", "WR403", "WR404")
    ]
    assert CRITERIA_SCHEMA.is_valid(criteria) is (structural == [])


@pytest.mark.parametrize(
    ("value", "suggestion"),
    [
        pytest.param("missing", 'Include "missing" in the output.', id="text"),
        pytest.param(
            '{"state": "init"}',
            'Include this text in the output as written: {"state": "init"}',
            id="json-never-escaped",
        ),
    ],
)
def test_a_contains_rule_without_message_shows_its_value_as_written(value, suggestion) -> None:
    """Upstream's default message, the value after a colon: a JSON value quoted would come out
    escaped, the string agents copy instead of the object."""
    result = validate_output({"type": "contains", "value": value, "message": ""}, "nope")
    assert result.issues == [f"Output must include: {value}"]
    assert result.suggestions == [suggestion]
