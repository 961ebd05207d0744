"""The schema's errors (WR1xx): worded as what to do, with the fix that makes them right."""

from __future__ import annotations

import json

from tests.engine.lint.lint_workflows import bad_and_good, check_bad_and_good, lint, mutate, set_at
from workrail_engine.lint import lint_text

# code, bad change, good change, text the diagnostic must sit on
CASES = [
    ("WR101", set_at(["steps", 0, "title"], 3), set_at(["steps", 0, "title"], "Three"), "3"),
    (
        "WR102",
        set_at(["steps", 0, "promt"], "x"),
        set_at(["steps", 0, "guidance"], ["x"]),
        '"promt"',
    ),
    ("WR103", lambda w: w["steps"][0].pop("prompt"), lambda w: None, "{"),
    (
        "WR104",
        set_at(["steps", 1, "onFailure"], "contineu"),
        set_at(["steps", 1, "onFailure"], "continue"),
        '"contineu"',
    ),
    (
        "WR105",
        set_at(["steps", 2, "id"], "Review_It"),
        set_at(["steps", 2, "id"], "review-it"),
        '"Review_It"',
    ),
    (
        "WR106",
        set_at(["steps", 1, "run", "timeoutSeconds"], -1),
        set_at(["steps", 1, "run", "timeoutSeconds"], 1),
        "-1",
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def test_typo_messages_name_the_closest_valid_name_and_offer_a_fix():
    result = lint(mutate(set_at(["steps", 0, "promt"], "x")))
    [unknown] = [d for d in result.diagnostics if d.code == "WR102"]
    assert "did you mean 'prompt'" in unknown.message
    [edit] = unknown.fixes[0].edits
    assert edit.new_text == '"prompt"'


def test_missing_required_property_fix_inserts_it():
    result = lint(mutate(lambda w: w["steps"][0].pop("prompt")))
    [missing] = [d for d in result.diagnostics if d.code == "WR103"]
    text = result.document.text
    [edit] = missing.fixes[0].edits
    fixed = json.loads(text[: edit.span.start] + edit.new_text + text[edit.span.end :])
    assert fixed["steps"][0]["prompt"] == ""


def test_a_key_of_another_step_kind_is_not_called_a_typo():
    result = lint(mutate(set_at(["steps", 0, "onFailure"], "continue")))
    [unknown] = [d for d in result.diagnostics if d.code == "WR102"]
    assert unknown.message == "'onFailure' belongs to a command step, not to a prompt step"
    assert unknown.fixes == ()


def test_a_shell_string_command_gets_an_argv_fix():
    result = lint(mutate(set_at(["steps", 1, "run", "command"], 'make test -k "a b"')))
    [wrong] = [d for d in result.diagnostics if d.code == "WR101"]
    assert wrong.fixes[0].edits[0].new_text == '["make", "test", "-k", "a b"]'


def test_yaml_values_read_as_booleans_or_numbers_get_a_quoting_fix():
    text = "id: demo\nname: no\nversion: 1.10\nsteps:\n  - id: abc\n    title: t\n    prompt: p\n"
    result = lint_text(text, "demo.yaml")
    quoted = {
        d.pointer: d.fixes[0].edits[0].new_text for d in result.diagnostics if d.code == "WR101"
    }
    assert quoted == {"/name": '"no"', "/version": '"1.10"'}


def test_limits_are_worded_as_what_to_do():
    result = lint(mutate(set_at(["steps", 1, "run", "timeoutSeconds"], 0)))
    assert [d.message for d in result.diagnostics] == ["'timeoutSeconds' must be greater than 0"]


def test_missing_prompt_and_missing_group_members_name_every_alternative():
    no_prompt = lint(mutate(lambda w: w["steps"][0].pop("prompt")))
    [missing] = no_prompt.diagnostics
    assert "'prompt', 'promptBlocks' or 'templateCall'" in missing.message
    group = {"id": "together", "type": "parallel", "title": "Together"}
    no_members = lint(mutate(lambda w: w["steps"].append(group)))
    [missing] = no_members.diagnostics
    assert "'steps'" in missing.message and "'parallelDelegations'" in missing.message
