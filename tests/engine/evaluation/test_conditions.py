"""The condition evaluator: strict semantics, static problems, plain-English descriptions."""

from __future__ import annotations

import pytest
from boolean_trees import boolean_trees
from hypothesis import given, settings
from hypothesis import strategies as st

from workrail_engine.evaluation.conditions import (
    MISSING,
    OPERATORS,
    condition_problems,
    describe,
    evaluate,
    json_equal,
    resolve,
)
from workrail_engine.evaluation.problems import Problem

CONTEXT = {
    "taskScope": "large",
    "complexity": 0.8,
    "count": 3,
    "flag": True,
    "nothing": None,
    "tags": ["api", "auth", 1],
    "title": "Fix the Login bug",
    "review": {"files": [{"name": "app.py"}, {"name": "test_app.py"}]},
}


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        pytest.param({"var": "taskScope", "equals": "large"}, True, id="equals-string"),
        pytest.param(
            {"var": "taskScope", "equals": " Large "}, True, id="equals-trimmed-case-insensitive"
        ),
        pytest.param({"var": "taskScope", "equals": "larger"}, False, id="equals-whole-string"),
        pytest.param({"var": "count", "equals": 3.0}, True, id="equals-int-float"),
        pytest.param({"var": "count", "equals": "3"}, True, id="number-equals-numeric-string"),
        pytest.param({"var": "count", "equals": "three"}, False, id="number-vs-word"),
        pytest.param({"var": "flag", "equals": "TRUE"}, True, id="bool-equals-true-string"),
        pytest.param({"var": "flag", "equals": "false"}, False, id="bool-vs-false-string"),
        pytest.param({"var": "flag", "not_equals": "True"}, False, id="not-equals-lenient"),
        pytest.param({"var": "flag", "equals": 1}, False, id="bool-is-not-a-number"),
        pytest.param({"var": "flag", "equals": True}, True, id="equals-bool"),
        pytest.param({"var": "nothing", "equals": None}, True, id="present-null-equals-null"),
        pytest.param({"var": "absent", "equals": None}, False, id="missing-is-not-null"),
        pytest.param({"var": "tags", "equals": ["api", "auth", 1]}, True, id="equals-array-deep"),
        pytest.param(
            {"var": "tags", "equals": ["api", "auth", True]},
            False,
            id="deep-equality-keeps-bool-apart",
        ),
        pytest.param({"var": "taskScope", "not_equals": "small"}, True, id="not-equals"),
        pytest.param(
            {"var": "absent", "not_equals": "small"}, True, id="missing-not-equals-is-true"
        ),
        pytest.param({"var": "complexity", "gt": 0.7}, True, id="gt"),
        pytest.param({"var": "complexity", "gt": 0.8}, False, id="gt-strict"),
        pytest.param({"var": "complexity", "gte": 0.8}, True, id="gte"),
        pytest.param({"var": "count", "lt": 3}, False, id="lt-strict"),
        pytest.param({"var": "count", "lte": 3}, True, id="lte"),
        pytest.param({"var": "taskScope", "gt": 0}, False, id="gt-on-string-is-false"),
        pytest.param({"var": "flag", "gte": 0}, False, id="gt-on-bool-is-false"),
        pytest.param({"var": "absent", "lt": 10}, False, id="missing-lt-is-false"),
        pytest.param({"var": "taskScope", "in": ["small", "large"]}, True, id="in"),
        pytest.param({"var": "count", "in": ["3"]}, True, id="in-lenient"),
        pytest.param({"var": "taskScope", "in": ["SMALL"]}, False, id="in-lenient-still-compares"),
        pytest.param({"var": "absent", "in": [None]}, False, id="missing-in-is-false"),
        pytest.param({"var": "title", "contains": "Login"}, True, id="contains-substring"),
        pytest.param({"var": "title", "contains": "login"}, False, id="contains-case-sensitive"),
        pytest.param({"var": "tags", "contains": "auth"}, True, id="contains-array-member"),
        pytest.param(
            {"var": "tags", "contains": "au"}, False, id="contains-array-is-not-substring"
        ),
        pytest.param({"var": "tags", "contains": True}, False, id="contains-array-bool-vs-1"),
        pytest.param({"var": "count", "contains": 3}, False, id="contains-on-number-is-false"),
        pytest.param({"var": "title", "contains": 3}, False, id="contains-string-with-number"),
        pytest.param({"var": "title", "startsWith": "Fix"}, True, id="startsWith"),
        pytest.param({"var": "title", "endsWith": "bug"}, True, id="endsWith"),
        pytest.param(
            {"var": "tags", "startsWith": "api"}, False, id="startsWith-on-array-is-false"
        ),
        pytest.param({"var": "title", "matches": "^Fix .* bug$"}, True, id="matches"),
        pytest.param({"var": "title", "matches": "login"}, False, id="matches-case-sensitive"),
        pytest.param({"var": "title", "matches": "(?i)login"}, True, id="matches-inline-flag"),
        pytest.param({"var": "count", "matches": "3"}, False, id="matches-on-number-is-false"),
        pytest.param(
            {"var": "review.files.1.name", "equals": "test_app.py"},
            True,
            id="dotted-path-with-index",
        ),
        pytest.param(
            {"var": "review.files.2.name", "not_equals": "x"},
            True,
            id="index-out-of-range-is-missing",
        ),
        pytest.param(
            {"var": "review.files.name", "equals": "app.py"}, False, id="key-into-list-is-missing"
        ),
        pytest.param({"var": "title.length", "equals": 17}, False, id="no-properties-of-strings"),
        pytest.param(
            {"and": [{"var": "taskScope", "equals": "large"}, {"var": "complexity", "gt": 0.7}]},
            True,
            id="and",
        ),
        pytest.param(
            {"or": [{"var": "taskScope", "equals": "small"}, {"var": "count", "equals": 3}]},
            True,
            id="or",
        ),
        pytest.param({"not": {"var": "taskScope", "equals": "large"}}, False, id="not"),
        pytest.param({"not": {"var": "absent", "gt": 1}}, True, id="not-of-missing"),
    ],
)
def test_evaluate(condition: dict, expected: bool) -> None:
    assert evaluate(condition, CONTEXT) is expected


def test_none_always_holds() -> None:
    assert evaluate(None, {}) is True
    assert describe(None) == "always"


def test_none_context_is_empty() -> None:
    assert evaluate({"var": "x", "not_equals": 1}, None) is True


def test_resolve_reports_missing_distinctly() -> None:
    assert resolve({"a": {"b": None}}, "a.b") is None
    assert resolve({"a": {"b": None}}, "a.c") is MISSING


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        pytest.param(
            {"var": "a", "gt": "5"},
            [
                Problem(
                    "/gt",
                    "WR402",
                    "'gt' compares numbers; its value must be a number, not a string.",
                )
            ],
            id="gt-string",
        ),
        pytest.param(
            {"var": "a", "lte": True},
            [
                Problem(
                    "/lte",
                    "WR402",
                    "'lte' compares numbers; its value must be a number, not a boolean.",
                )
            ],
            id="lte-bool",
        ),
        pytest.param(
            {"var": "a", "in": "abc"},
            [Problem("/in", "WR402", "'in' needs an array of values, not a string.")],
            id="in-string",
        ),
        pytest.param(
            {"var": "a", "startsWith": 1},
            [Problem("/startsWith", "WR402", "'startsWith' needs a string, not a number.")],
            id="startsWith-number",
        ),
        pytest.param(
            {"var": "a", "endsWith": None},
            [Problem("/endsWith", "WR402", "'endsWith' needs a string, not null.")],
            id="endsWith-null",
        ),
        pytest.param(
            {"var": "a", "matches": ["x"]},
            [Problem("/matches", "WR402", "'matches' needs a string, not an array.")],
            id="matches-array",
        ),
    ],
)
def test_type_mismatch_problems(condition: dict, expected: list[Problem]) -> None:
    assert condition_problems(condition) == expected


def test_nested_pointers_and_invalid_regex() -> None:
    condition = {
        "and": [
            {"var": "a", "equals": 1},
            {"or": [{"var": "b", "gt": "x"}, {"not": {"var": "c", "matches": "(?=x"}}]},
        ]
    }
    problems = condition_problems(condition)
    assert [(p.pointer, p.code) for p in problems] == [
        ("/and/1/or/0/gt", "WR402"),
        ("/and/1/or/1/not/matches", "WR401"),
    ]
    assert "missing )" in problems[1].message


@pytest.mark.parametrize(
    ("condition", "pointer", "fragment"),
    [
        pytest.param("taskScope == large", "", "must be an object, not a string", id="string"),
        pytest.param({"equals": 1}, "", 'needs "var"', id="operator-without-var"),
        pytest.param(
            {"var": "a", "eq": 1}, "/eq", "did you mean 'equals'", id="unknown-operator-with-hint"
        ),
        pytest.param(
            {"var": "a", "gt": 1, "lt": 5}, "", "exactly one operator", id="two-operators"
        ),
        pytest.param({"var": "a..b", "equals": 1}, "/var", "dotted path", id="empty-segment"),
        pytest.param({"var": 3, "equals": 1}, "/var", "dotted path", id="var-not-string"),
        pytest.param({"and": []}, "/and", "non-empty array", id="empty-and"),
        pytest.param({"or": {"var": "a", "equals": 1}}, "/or", "non-empty array", id="or-object"),
        pytest.param(
            {"and": [{"var": "a", "equals": 1}], "var": "b"},
            "",
            "no other keys",
            id="mixed-composition",
        ),
        pytest.param(
            {"not": [{"var": "a", "equals": 1}]}, "/not", "must be an object", id="not-array"
        ),
    ],
)
def test_malformed_conditions(condition, pointer: str, fragment: str) -> None:
    problems = condition_problems(condition)
    assert problems, "a malformed condition must be reported"
    assert problems[0].pointer == pointer
    assert problems[0].code == "WR400"
    assert fragment in problems[0].message
    with pytest.raises(ValueError, match="Invalid condition"):
        evaluate(condition, {"a": 1})


def test_evaluate_raises_instead_of_returning_false_for_bad_operands() -> None:
    # the old WorkRail turned this into "false" silently
    with pytest.raises(ValueError, match=r"/and/1/gt: 'gt' compares numbers"):
        evaluate({"and": [{"var": "a", "equals": 2}, {"var": "a", "gt": "1"}]}, {"a": 1})


def test_evaluate_checks_parts_it_would_short_circuit() -> None:
    with pytest.raises(ValueError):
        evaluate({"or": [{"var": "a", "equals": 1}, {"var": "a", "matches": "("}]}, {"a": 1})


def test_evaluate_needs_an_object_context() -> None:
    with pytest.raises(ValueError, match="against an object"):
        evaluate({"var": "a", "equals": 1}, ["a"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("condition", "text"),
    [
        pytest.param(
            {"and": [{"var": "taskScope", "equals": "large"}, {"var": "complexity", "gt": 0.7}]},
            'taskScope is "large" and complexity is greater than 0.7',
            id="brief-example",
        ),
        pytest.param({"var": "a", "not_equals": "x"}, 'a is not "x"', id="not-equals"),
        pytest.param({"var": "a", "gte": 2}, "a is at least 2", id="gte"),
        pytest.param({"var": "a", "lte": 2}, "a is at most 2", id="lte"),
        pytest.param({"var": "a", "lt": 2}, "a is less than 2", id="lt"),
        pytest.param(
            {"var": "p", "in": ["high", "critical"]}, 'p is one of "high", "critical"', id="in"
        ),
        pytest.param({"var": "t", "contains": "x"}, 't contains "x"', id="contains"),
        pytest.param({"var": "t", "startsWith": "x"}, 't starts with "x"', id="startsWith"),
        pytest.param({"var": "t", "endsWith": "x"}, 't ends with "x"', id="endsWith"),
        pytest.param(
            {"var": "t", "matches": "^v\\d+"}, "t matches the pattern /^v\\d+/", id="matches"
        ),
        pytest.param(
            {
                "and": [
                    {"var": "a", "equals": 1},
                    {"or": [{"var": "b", "equals": 2}, {"var": "c", "equals": 3}]},
                ]
            },
            "a is 1 and (b is 2 or c is 3)",
            id="precedence-parentheses",
        ),
        pytest.param({"not": {"var": "a", "equals": 1}}, "not (a is 1)", id="not"),
    ],
)
def test_describe(condition: dict, text: str) -> None:
    assert describe(condition) == text


def test_describe_rejects_malformed() -> None:
    with pytest.raises(ValueError):
        describe({"var": "a", "gt": "big"})


# --- property-based -------------------------------------------------------------------------

NAMES = ["a", "b", "c.d", "c.e.0"]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(-5, 5, allow_nan=False)
    | st.sampled_from(["", "x", "xy", "X"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["d", "e", "0"]), inner, max_size=3)
    ),
    max_leaves=8,
)
numbers = st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False)
strings = st.sampled_from(["", "x", "y", "xy", "X", "^x", "x|y", "(x)+$"])


def comparisons() -> st.SearchStrategy[dict]:
    operand = {
        "equals": json_values,
        "not_equals": json_values,
        "gt": numbers,
        "gte": numbers,
        "lt": numbers,
        "lte": numbers,
        "in": st.lists(json_values, max_size=3),
        "contains": json_values,
        "startsWith": strings,
        "endsWith": strings,
        "matches": strings,
    }
    return st.sampled_from(OPERATORS).flatmap(
        lambda op: st.builds(
            lambda var, value: {"var": var, op: value}, st.sampled_from(NAMES), operand[op]
        )
    )


conditions = boolean_trees(comparisons())
contexts = st.fixed_dictionaries(
    {},
    optional={
        "a": json_values,
        "b": json_values,
        "c": st.fixed_dictionaries(
            {}, optional={"d": json_values, "e": st.lists(json_values, max_size=2)}
        ),
    },
)


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(conditions)
def test_generated_conditions_are_valid(condition: dict) -> None:
    assert condition_problems(condition) == []


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(conditions, st.dictionaries(st.text(max_size=3), json_values, max_size=4) | contexts)
def test_evaluate_never_raises_on_json_contexts(condition: dict, context: dict) -> None:
    assert evaluate(condition, context) in (True, False)


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(conditions, contexts)
def test_not_negates(condition: dict, context: dict) -> None:
    assert evaluate({"not": condition}, context) is (not evaluate(condition, context))


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(st.lists(conditions, min_size=1, max_size=3), contexts)
def test_and_or_are_all_any(parts: list[dict], context: dict) -> None:
    values = [evaluate(part, context) for part in parts]
    assert evaluate({"and": parts}, context) is all(values)
    assert evaluate({"or": parts}, context) is any(values)


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(conditions, conditions, contexts)
def test_de_morgan(a: dict, b: dict, context: dict) -> None:
    left = evaluate({"not": {"and": [a, b]}}, context)
    right = evaluate({"or": [{"not": a}, {"not": b}]}, context)
    assert left is right


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(st.sampled_from(NAMES), json_values, contexts)
def test_not_equals_is_not_equals_even_when_missing(var: str, value, context: dict) -> None:
    equal = evaluate({"var": var, "equals": value}, context)
    assert evaluate({"var": var, "not_equals": value}, context) is (not equal)


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(st.sampled_from(OPERATORS), contexts)
def test_missing_variable_is_false_except_not_equals(operator: str, context: dict) -> None:
    operand = {
        "gt": 0,
        "gte": 0,
        "lt": 0,
        "lte": 0,
        "in": [None],
        "startsWith": "",
        "endsWith": "",
        "matches": "",
    }
    condition = {"var": "zz.missing", operator: operand.get(operator)}
    assert evaluate(condition, context) is (operator == "not_equals")


@settings(deadline=None)  # timing varies on a loaded 2-core CI machine
@given(json_values)
def test_json_equal_is_reflexive_and_strict_about_bools(value) -> None:
    assert json_equal(value, value)
    assert not json_equal(True, 1) and not json_equal(False, 0)


@settings(deadline=None, max_examples=50)
@given(conditions)
def test_describe_names_every_variable(condition: dict) -> None:
    text = describe(condition)
    stack = [condition]
    while stack:
        node = stack.pop()
        if "var" in node:
            assert node["var"] in text
        stack.extend(
            node.get("and", []) + node.get("or", []) + ([node["not"]] if "not" in node else [])
        )


# --- the schema and the evaluator accept the same conditions ---------------------------------


def _schema_validator(definition: str):
    import jsonschema_rs

    from workrail_engine.schema import load_schema

    schema = load_schema()
    return jsonschema_rs.validator_for(
        {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}, offline=True
    )


CONDITION_SCHEMA = _schema_validator("condition")
wrong_operands = st.one_of(json_values, st.sampled_from(["(", "(?=x)", r"\1", "a{1001}"]))
mangled = st.recursive(
    st.one_of(
        comparisons(),
        st.builds(
            lambda op, value: {"var": "a", op: value}, st.sampled_from(OPERATORS), wrong_operands
        ),
        st.builds(
            lambda key: {"var": "a", key: 1},
            st.sampled_from(["eq", "neq", "exists", "matches_", "var2"]),
        ),
        st.builds(lambda var: {"var": var, "equals": 1}, st.sampled_from(["", 3, None])),
        st.just({}),
        st.just({"var": "a"}),
        st.just({"var": "a", "gt": 1, "lt": 5}),
    ),
    lambda inner: (
        st.builds(lambda xs: {"and": xs}, st.lists(inner, max_size=2))
        | st.builds(lambda xs: {"or": xs}, st.lists(inner, max_size=2))
        | st.builds(lambda x: {"not": x}, inner)
    ),
    max_leaves=4,
)


@settings(deadline=None, max_examples=150)
@given(
    mangled
    | st.builds(
        lambda p: {"not": {"var": "a", "matches": p}}, st.sampled_from(["(", "(?=x)", "ok"])
    )
)
def test_schema_and_evaluator_agree_on_what_is_a_condition(condition) -> None:
    # The old WorkRail's runtime accepted operators its schema rejected; here they cannot drift.
    # Whether a pattern compiles under RE2 is beyond a JSON Schema: that is WR401's job alone.
    problems = [p for p in condition_problems(condition) if p.code != "WR401"]
    assert CONDITION_SCHEMA.is_valid(condition) is (problems == [])


@pytest.mark.parametrize(
    ("condition", "expected", "note"),
    [
        pytest.param(
            {"var": "taskScope", "gt": 2},
            False,
            'taskScope is a string ("large"), not a number',
            id="gt-on-word",
        ),
        pytest.param(
            {"var": "flag", "startsWith": "t"},
            False,
            "flag is a boolean (true), not a string",
            id="startsWith-on-bool",
        ),
        pytest.param(
            {"var": "count", "contains": 3},
            False,
            "count is a number (3), not a string or an array",
            id="contains-on-number",
        ),
    ],
)
def test_type_mismatch_is_noted(condition: dict, expected: bool, note: str) -> None:
    notes: list[str] = []
    assert evaluate(condition, CONTEXT, notes) is expected
    assert len(notes) == 1 and note in notes[0], notes


def test_numeric_string_orders_as_number_without_note() -> None:
    notes: list[str] = []
    assert evaluate({"var": "n", "gt": 5}, {"n": " 7 "}, notes) is True
    assert evaluate({"var": "absent", "gt": 5}, {}, notes) is False
    assert notes == []
