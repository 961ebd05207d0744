"""The check of an answer's context against the workflow's declared `context`
(`workrail_engine/evaluation/step_checks.context_problems`); through the server in
tests/mcp/test_session_parity.py."""

from __future__ import annotations

from workrail_engine.definition.declared import with_context_defaults
from workrail_engine.evaluation.step_checks import check_answer, context_problems, unset_context

DECLARED = {
    "context": {
        "taskSize": {"type": "string", "enum": ["small", "large"]},
        "count": {"type": "integer", "minimum": 0},
        "reviewer": {"type": "string", "default": "anyone"},
        "remote": {"$ref": "https://example.com/schema.json"},  # WR406: never fetched, skipped
    }
}


def test_only_declared_variables_with_a_usable_schema_are_checked():
    answer = {"taskSize": "large", "count": 3, "other": {"any": "thing"}, "remote": 1}
    assert context_problems(DECLARED, answer) == []
    assert context_problems({}, {"taskSize": "huge"}) == []


def test_a_refused_value_says_where_and_what_to_send():
    ((name, message, fix, schema, missing),) = context_problems(DECLARED, {"count": -1})
    assert (name, schema, missing) == ("count", DECLARED["context"]["count"], False)
    assert message.startswith("context.count is -1, which its declaration refuses: -1 is less")
    assert fix == "Send context.count as a JSON integer."


def test_a_long_value_is_shown_shortened():
    ((_, message, *_),) = context_problems(DECLARED, {"taskSize": "x" * 10_000})
    assert len(message) < 400 and "…" in message


def test_check_answer_counts_it_as_a_problem_of_kind_context():
    checked = check_answer(DECLARED, {"id": "size"}, "notes", [], {}, answer_context={"count": "3"})
    assert [p["kind"] for p in checked.problems] == ["context"] and not checked.valid


SETS_ALL = {"id": "size", "sets": ["taskSize", "count", "reviewer", "undeclared"]}


def test_a_variable_of_sets_without_a_default_must_be_set():
    missing = unset_context(DECLARED, SETS_ALL, {"count": 2})
    assert [(issue.name, issue.missing) for issue in missing] == [("taskSize", True)]
    assert (
        missing[0].message == "context.taskSize is not set: step 'size' asks the answer to set it"
    )
    assert missing[0].fix == 'Send context.taskSize as one of "small", "large".'


def test_no_answer_context_checks_nothing_of_sets():
    """`workflow_validate` checks an output with no answer's context: nothing is missing."""
    assert check_answer(DECLARED, SETS_ALL, "notes", [], {}).valid


def test_a_declared_default_fills_only_a_variable_the_context_does_not_hold():
    assert with_context_defaults(DECLARED, {"count": 1}) == {"count": 1, "reviewer": "anyone"}
    assert with_context_defaults(DECLARED, {"reviewer": "ana"}) == {"reviewer": "ana"}
    assert with_context_defaults({}, {"x": 1}) == {"x": 1}
