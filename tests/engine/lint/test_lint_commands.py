"""Command steps (WR5xx) — `workrail_engine/lint/commands.py` and `shell_scripts.py`
(tests/engine/runs/test_commands.py is the runs' commands)."""

from __future__ import annotations

from tests.engine.lint.lint_workflows import bad_and_good, check_bad_and_good, lint, mutate, set_at
from workrail_engine.diagnostics import Severity
from workrail_engine.lint import shell_scripts
from workrail_engine.lint.fixes import fix_text

COMMAND = ["steps", 1, "run", "command"]

# code, bad change, good change, text the diagnostic must sit on
CASES = [
    ("WR501", lambda w: w["steps"][1]["run"].pop("timeoutSeconds"), lambda w: None, '"run"'),
    (
        "WR502",
        set_at(COMMAND, ["sh", "-c", "make {{parameters.target}}"]),
        set_at(COMMAND, ["sh", "-c", 'make "$1"', "sh", "{{parameters.target}}"]),
        "{{parameters.target}}",
    ),
    (
        "WR503",
        set_at(COMMAND, ["sh", "-c", "if [ $n == 1 ]; then make; fi"]),
        set_at(COMMAND, ["sh", "-c", 'if [ "$n" = 1 ]; then make; fi']),
        "$n",
    ),
    (
        "WR504",
        set_at(COMMAND, ["sh", "-c", "true; " * (shell_scripts.MAX_SCRIPT_CHARS // 6 + 1)]),
        set_at(COMMAND, ["sh", "-c", "true; " * 10]),
        None,
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def test_wr502_is_an_error_for_agent_written_text_with_the_env_fix():
    script = "git commit -m {{steps.plan.output}} && echo {{context.ticket}} {{parameters.target}}"
    result = lint(mutate(set_at(COMMAND, ["bash", "-c", script])))
    found = [(d.severity, d.data["reference"]) for d in result.diagnostics if d.code == "WR502"]
    assert found == [
        (Severity.ERROR, "steps.plan.output"),
        (Severity.ERROR, "context.ticket"),
        (Severity.WARNING, "parameters.target"),
    ]
    first = next(d for d in result.diagnostics if d.code == "WR502")
    assert '"env": {"PLAN_OUTPUT": "{{steps.plan.output}}"}' in first.message
    assert '"$PLAN_OUTPUT"' in first.message


def test_shellcheck_fix_is_offered_unsafe_and_escaped_into_the_json_string():
    workflow = mutate(set_at(COMMAND, ["sh", "-c", 'echo "x"\ntest -f $n']))
    result = lint(workflow)
    (finding,) = [d for d in result.diagnostics if d.data.get("shellcheck") == "SC2086"]
    assert not finding.fixes[0].safe
    fixed = fix_text(result.document.text, "demo.json", unsafe=True).text
    assert '"echo \\"x\\"\\ntest -f \\"$n\\""' in fixed


def test_shellcheck_results_are_kept_by_script_text(monkeypatch):
    workflow = mutate(set_at(COMMAND, ["sh", "-c", "echo $unique_to_this_test"]))
    lint(workflow)
    calls = []
    monkeypatch.setattr(shell_scripts, "_run", lambda *a: calls.append(a) or [])
    assert [d.code for d in lint(workflow).diagnostics] == ["WR503"]
    assert calls == []
