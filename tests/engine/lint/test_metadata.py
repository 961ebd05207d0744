"""The workflow's id and version (WR6xx)."""

from __future__ import annotations

from tests.engine.lint.lint_workflows import bad_and_good, check_bad_and_good, lint, mutate, set_at

# code, bad change, good change, text the diagnostic must sit on
CASES = [
    ("WR601", set_at(["id"], "other-name"), set_at(["id"], "demo"), '"other-name"'),
    ("WR602", set_at(["version"], "1.0"), set_at(["version"], "1.0.0-rc.1+build.5"), '"1.0"'),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def test_the_file_name_fix_is_offered_only_when_the_name_is_an_id():
    workflow = mutate(set_at(["id"], "wr.bug-investigation"))
    assert lint(workflow, "wr.bug-investigation.json").diagnostics == []  # id = file name
    [differs] = lint(workflow, "bug-investigation.agentic.v2.json").diagnostics
    assert differs.code == "WR601" and differs.fixes == ()
    [fixable] = lint(workflow, "bug-investigation.json").diagnostics
    assert fixable.fixes and fixable.fixes[0].edits[0].new_text == '"bug-investigation"'
