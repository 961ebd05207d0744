"""The check of an answer's context against the workflow's declared `context`
(`workrail_engine/evaluation/step_checks.context_problems`); through the server in
tests/mcp/test_session_parity.py."""

from __future__ import annotations

from workrail_engine.evaluation.step_checks import check_answer, context_problems

DECLARED = {
    "context": {
        "taskSize": {"type": "string", "enum": ["small", "large"]},
        "count": {"type": "integer", "minimum": 0},
        "remote": {"$ref": "https://example.com/schema.json"},  # WR406: never fetched, skipped
    }
}


def test_only_declared_variables_with_a_usable_schema_are_checked():
    answer = {"taskSize": "large", "count": 3, "other": {"any": "thing"}, "remote": 1}
    assert context_problems(DECLARED, answer) == []
    assert context_problems({}, {"taskSize": "huge"}) == []


def test_a_refused_value_says_where_and_what_to_send():
    ((message, fix),) = context_problems(DECLARED, {"count": -1})
    assert message.startswith("context.count is -1, which its declaration refuses: -1 is less")
    assert fix == "Send context.count as a JSON integer."


def test_a_long_value_is_shown_shortened():
    ((message, _),) = context_problems(DECLARED, {"taskSize": "x" * 10_000})
    assert len(message) < 400 and "…" in message


def test_check_answer_counts_it_as_a_problem_of_kind_context():
    checked = check_answer(DECLARED, {"id": "size"}, "notes", [], {}, answer_context={"count": "3"})
    assert [p["kind"] for p in checked.problems] == ["context"] and not checked.valid
