"""The corpus of seeded flow bugs: one construct each, the code that must find it
and the text it must sit on. `workrail validate` (tests/cli/test_flow_checks_cli.py) and the
language server (tests/lsp/test_lsp_flow_checks.py) are both checked against it."""

from __future__ import annotations

from typing import NamedTuple


class SeededBug(NamedTuple):
    name: str  # the file name
    text: str
    code: str
    severity: str
    on_text: str  # the text the diagnostic sits on


def _steps(workflow_id: str, *steps: str) -> str:
    head = f'{{"id": "{workflow_id}", "name": "Flow bug", "steps": [\n'
    return head + ",\n".join(steps) + "\n]}\n"


TIMEOUT = '"timeoutSeconds": 30'

SEEDED_BUGS = [
    SeededBug(
        "contradiction.json",
        _steps(
            "contradiction",
            '{"id": "plan", "title": "Plan", "prompt": "Plan; set size to small or large.",'
            ' "runCondition": {"and": [{"var": "size", "equals": "large"},'
            ' {"var": "size", "equals": "small"}]}}',
        ),
        "WR410",
        "warning",
        '{"var": "size", "equals": "small"}',
    ),
    SeededBug(
        "group-contradiction.json",
        _steps(
            "group-contradiction",
            '{"id": "fan", "type": "parallel", "title": "Fan",'
            ' "runCondition": {"var": "mode", "equals": "fast"}, "steps": ['
            '{"id": "deep", "title": "Deep", "prompt": "Go deep: the mode is deep.",'
            ' "runCondition": {"var": "mode", "equals": "deep"}}]}',
        ),
        "WR410",
        "warning",
        '{"var": "mode", "equals": "deep"}',
    ),
    SeededBug(
        "loop-unchanged.json",
        _steps(
            "loop-unchanged",
            '{"id": "start", "title": "Start", "prompt": "Set done to false."}',
            '{"id": "polish", "type": "loop", "title": "Polish",'
            ' "loop": {"type": "until", "condition": {"var": "done", "equals": true}},'
            ' "body": [{"id": "work", "title": "Work", "prompt": "Improve the text."}]}',
        ),
        "WR207",
        "warning",
        '{"var": "done", "equals": true}',
    ),
    SeededBug(
        "skipped-output.json",
        _steps(
            "skipped-output",
            '{"id": "ask", "title": "Ask", "prompt": "Ask the user; set mode to deep or fast.",'
            ' "runCondition": {"var": "mode", "equals": "deep"}}',
            '{"id": "use", "title": "Use", "prompt": "Use {{steps.ask.output}} now."}',
        ),
        "WR307",
        "warning",
        "{{steps.ask.output}}",
    ),
    SeededBug(
        "unmentioned-variable.json",
        _steps(
            "unmentioned-variable",
            '{"id": "plan", "title": "Plan", "prompt": "Plan the work."}',
            '{"id": "fix", "title": "Fix", "prompt": "Fix the bug.",'
            ' "runCondition": {"var": "taskKind", "equals": "bug"}}',
        ),
        "WR308",
        "warning",
        '"taskKind"',
    ),
    SeededBug(
        "agent-text-in-script.json",
        _steps(
            "agent-text-in-script",
            '{"id": "plan", "title": "Plan", "prompt": "Plan."}',
            '{"id": "apply", "run": {"command": ["sh", "-c",'
            ' "echo start; git commit -m {{steps.plan.output}}"], ' + TIMEOUT + "}}",
        ),
        "WR502",
        "error",
        "{{steps.plan.output}}",
    ),
    SeededBug(
        # escapes before the finding: \" \u00e9 \n and \\ move every later character
        "shellcheck.json",
        _steps(
            "shellcheck",
            '{"id": "check", "run": {"command": ["sh", "-c",'
            r' "echo \"caf\u00e9\" \\\\ ok\nif [ $n == 1 ]; then echo one; fi"], ' + TIMEOUT + "}}",
        ),
        "WR503",
        "warning",
        "==",
    ),
    SeededBug(
        "shellcheck-block.yaml",
        "id: shellcheck-block\nname: Flow bug\nsteps:\n"
        "  - id: check\n    run:\n      timeoutSeconds: 30\n      command:\n"
        "        - bash\n        - -ec\n        - |\n"
        "          echo start\n"
        '            for f in $(ls *.txt); do echo "$f"; done\n',
        "WR503",
        "error",  # ShellCheck's SC2045 is an error
        "$(ls *.txt)",
    ),
    SeededBug(
        "undeclared-context.json",
        '{"id": "undeclared-context", "name": "Flow bug",'
        ' "context": {"taskSize": {"type": "string", "enum": ["small", "large"]}},'
        ' "steps": [{"id": "plan", "title": "Plan", "prompt": "Plan.", "sets": ["taskSize"]},'
        ' {"id": "split", "title": "Split", "prompt": "Split the work.",'
        ' "runCondition": {"var": "taskSise", "equals": "large"}}]}\n',
        "WR309",
        "warning",
        '"taskSise"',
    ),
    SeededBug(
        "outside-enum.json",
        '{"id": "outside-enum", "name": "Flow bug",'
        ' "context": {"taskSize": {"type": "string", "enum": ["small", "large"]}},'
        ' "steps": [{"id": "plan", "title": "Plan", "prompt": "Plan.", "sets": ["taskSize"]},'
        ' {"id": "split", "title": "Split", "prompt": "Split the work.",'
        ' "runCondition": {"var": "taskSize", "in": ["large", "Huge"]}}]}\n',
        "WR411",
        "error",
        '"Huge"',
    ),
]
