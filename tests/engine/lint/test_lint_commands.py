"""Command steps (WR5xx) — `workrail_engine/lint/commands.py` (tests/engine/runs/test_commands.py
is the runs' commands)."""

from __future__ import annotations

from tests.engine.lint.lint_workflows import bad_and_good, check_bad_and_good, set_at

# code, bad change, good change, text the diagnostic must sit on
CASES = [
    ("WR501", lambda w: w["steps"][1]["run"].pop("timeoutSeconds"), lambda w: None, '"run"'),
    (
        "WR502",
        set_at(["steps", 1, "run", "command"], ["sh", "-c", "make {{parameters.target}}"]),
        set_at(
            ["steps", 1, "run", "command"], ["sh", "-c", 'make "$1"', "sh", "{{parameters.target}}"]
        ),
        '"make {{parameters.target}}"',
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)
