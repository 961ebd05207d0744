"""The lint pipeline (`workrail_engine/lint/__init__.py`): every check of one document, the
codes documented and tested, what is reported once, the cap, and a checker's own failure."""

from __future__ import annotations

import pytest

from tests.engine.lint.lint_workflows import BASE, MIXED_GROUP, lint, mutate, set_at
from workrail_engine.lint import duplicate_workflow_ids, lint_text
from workrail_engine.text.document import parse_document


def test_base_is_clean():
    assert lint(BASE).diagnostics == []


def test_spec_workflow_get_example_without_version_is_clean():
    example = {
        "id": "ai-task-implementation",
        "name": "AI Task Prompt Workflow",
        "description": "Complete task implementation with verification",
        "preconditions": ["Task description is clear and complete"],
        "steps": [
            {
                "id": "understand",
                "title": "Deep understanding of task and codebase",
                "prompt": "Analyze the task description...",
                "requireConfirmation": True,
            }
        ],
    }
    assert lint(example, "ai-task-implementation.json").diagnostics == []


def test_yaml_workflow_is_checked_the_same_way():
    text = "id: demo\nname: Demo\nsteps:\n  - id: plan\n    title: Plan\n    promt: x\n"
    result = lint_text(text, "demo.yaml")
    assert [d.code for d in result.diagnostics] == ["WR103", "WR102"]
    unknown = result.diagnostics[1]
    assert text[unknown.span.start : unknown.span.end] == "promt"


def test_duplicate_workflow_ids_across_files():
    a = parse_document('{"id": "same", "name": "A", "steps": []}', "a.json")
    b = parse_document('{"id": "same", "name": "B", "steps": []}', "b.json")
    c = parse_document('{"id": "other", "name": "C", "steps": []}', "c.json")
    found = duplicate_workflow_ids([a, b, c])
    assert sorted(found) == ["a.json", "b.json"]
    assert found["a.json"][0].related[0].path == "b.json"


def test_a_mixed_parallel_group_gets_one_clear_message():
    result = lint(mutate(lambda w: w["steps"].append(MIXED_GROUP)))
    assert [d.code for d in result.diagnostics] == ["WR206"]
    assert "not both" in result.diagnostics[0].message


def test_every_code_the_engine_emits_is_documented_and_tested():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    emitted = set()
    for source in [
        *(root / "workrail_engine").rglob("*.py"),
        *(root / "workrail_lsp").rglob("*.py"),
    ]:
        emitted |= set(re.findall(r'"(WR\d{3})"', source.read_text()))
    documented = set(
        re.findall(r"^\| (WR\d{3}) \|", (root / "docs" / "diagnostics.md").read_text(), re.M)
    )
    emitted.discard("WR400")  # runtime-only, explained under the table
    assert emitted <= documented, f"undocumented: {sorted(emitted - documented)}"
    # each lint module's codes: the first item of a row of its test module's table of cases
    case_rows = re.compile(r'^\s*\(\s*"(WR\d{3})",', re.M)
    tested = {
        code
        for module in (root / "tests/engine/lint").glob("test_*.py")
        for code in case_rows.findall(module.read_text())
    } | {
        "WR000",
        "WR007",
        "WR001",
        "WR002",
        "WR003",
        "WR004",
        "WR005",
        "WR006",
        "WR008",
        "WR009",
        "WR603",
        "WR703",
        "WR709",  # needs the catalog, like WR703: tests/upstream/test_upstream_cases.py
    }
    # the compile step's codes have their bad/good cases in tests/engine/compile/
    for module in (root / "tests/engine/compile").glob("test_*.py"):
        tested |= set(re.findall(r'"(WR8\d\d)"', module.read_text()))
    # replay's codes: a history diverging from an edited workflow in tests/cli/test_replay_cli.py
    tested |= set(re.findall(r'"(WR9\d\d)"', (root / "tests/cli/test_replay_cli.py").read_text()))
    assert documented <= tested, f"without a bad/good test: {sorted(documented - tested)}"


@pytest.mark.parametrize(
    "condition",
    [
        pytest.param({"var": "target", "gt": "5"}, id="gt-string"),
        pytest.param({"var": "target", "in": "abc"}, id="in-string"),
        pytest.param({"and": [{"var": "target", "lte": True}]}, id="nested-lte-bool"),
    ],
)
def test_operand_type_problems_are_reported_once(condition):
    result = lint(mutate(set_at(["steps", 2, "runCondition"], condition)))
    assert [d.code for d in result.diagnostics] == ["WR402"], [
        (d.code, d.message) for d in result.diagnostics
    ]


def test_a_checker_bug_becomes_wr000_instead_of_an_exception(monkeypatch, caplog):
    import workrail_engine.lint.structure as structure

    def broken(doc, sites):
        raise KeyError("simulated")

    monkeypatch.setattr(structure, "structure_diagnostics", broken)
    result = lint(BASE)
    assert [d.code for d in result.diagnostics] == ["WR000"]
    assert (
        "KeyError" in result.diagnostics[0].message
        and "please report it" in result.diagnostics[0].message
    )
    assert "checking demo.json failed" in caplog.text


def test_the_lint_package_has_no_import_circle():
    """Imports inside functions count too: a circle hidden by a late import is still a circle."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[3] / "workrail_engine" / "lint"
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        module = path.stem
        targets = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    targets.add(node.module.split(".")[0])
                else:
                    targets.update(alias.name for alias in node.names)
    graph = {m: {t for t in ts if t in graph and t != "__init__"} for m, ts in graph.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt}))
            for nxt in graph[start]
        )

    assert [m for m in graph if reaches(m, m, {m})] == []


def test_findings_past_the_cap_are_one_wr009_that_keeps_the_worst_severity():
    from workrail_engine.limits import MAX_FINDINGS_PER_FILE as CAP

    # CAP hints (info, {{a b}} is no reference) come first in the text, 5 errors after them
    prompt = "{{a b}} " * CAP + "{{parameters.nope}} " * 5
    result = lint(mutate(set_at(["steps", 0, "prompt"], prompt)))
    *shown, summary = result.diagnostics
    assert len(shown) == CAP and {d.code for d in shown} == {"WR306"}
    assert (summary.code, summary.severity.value) == ("WR009", "error")
    assert summary.message.startswith("5 more findings") and "WR303" in summary.message
    assert summary.data == {"notShown": 5}
    assert result.document.text[summary.span.start : summary.span.end] == "{{parameters.nope}}"

    # at the cap exactly: every finding listed, no WR009
    exact = lint(mutate(set_at(["steps", 0, "prompt"], "{{a b}} " * (CAP - 1) + "{{x y}}")))
    assert len(exact.diagnostics) == CAP and "WR009" not in {d.code for d in exact.diagnostics}
