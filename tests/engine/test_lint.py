"""Every diagnostic code: a bad example that raises it, a good one that does not, placed right."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from workrail_engine.lint import duplicate_workflow_ids, lint_text
from workrail_engine.text.document import parse_document

BASE = {
    "id": "demo",
    "name": "Demo",
    "version": "1.0.0",
    # upstream 3.x definitions that steps may refer to (WR701, WR702)
    "functionDefinitions": [{"name": "checks", "definition": "Run the checks and report."}],
    "assessments": [
        {
            "id": "quality",
            "purpose": "How good it is",
            "dimensions": [{"id": "overall", "purpose": "Overall", "levels": ["low", "high"]}],
        }
    ],
    "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
    "secrets": ["API_TOKEN"],
    "steps": [
        {"id": "plan", "title": "Plan", "prompt": "Plan the change for {{parameters.target}}."},
        {
            "id": "build",
            "run": {
                "command": ["make", "build", "{{parameters.target}}"],
                "timeoutSeconds": 60,
                "env": {"TOKEN": "{{secrets.API_TOKEN}}"},
            },
        },
        {"id": "review", "title": "Review", "prompt": "Review {{steps.plan.output}}."},
    ],
}


def lint(workflow, path="demo.json"):
    text = json.dumps(workflow, indent=2, ensure_ascii=False)
    return lint_text(text, path)


def mutate(change):
    workflow = copy.deepcopy(BASE)
    change(workflow)
    return workflow


def test_base_is_clean():
    assert lint(BASE).diagnostics == []


def _set(path, value):
    def change(w):
        node = w
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value

    return change


LOOP = {
    "id": "again",
    "type": "loop",
    "loop": {"type": "while", "condition": {"var": "more", "equals": True}},
    "body": "review",
}
INLINE_LOOP = {
    "id": "outer",
    "type": "loop",
    "loop": {"type": "for", "count": 2},
    "body": [{"id": "inner", "type": "loop", "loop": {"type": "for", "count": 2}, "body": "plan"}],
}

MIXED_GROUP = {
    "id": "fan-out",
    "type": "parallel",
    "title": "Fan out",
    "steps": [{"id": "lint", "run": {"command": ["ruff", "check"], "timeoutSeconds": 60}}],
    "parallelDelegations": [{"workflowId": "wr.routine-ideation", "goal": "Ideas"}],
}
FRAGMENT = {"id": "scope", "text": "Keep the change small."}
REFERENCE = {
    "id": "api-schema",
    "title": "API",
    "source": "./spec/api.json",
    "purpose": "Contract",
    "authoritative": True,
}
PLAN_ASSESSED = {**BASE["steps"][0], "assessmentRefs": ["quality"]}


def FOLLOWUP(level):  # noqa: N802 - reads as the constant it builds
    return {
        "when": {"anyEqualsLevel": level},
        "effect": {"kind": "require_followup", "guidance": "Raise it before moving on."},
    }


def DELEGATION(workflow_id):  # noqa: N802
    return {
        "id": "fan-out",
        "type": "parallel",
        "title": "Fan out",
        "parallelDelegations": [{"workflowId": workflow_id, "goal": "Ideas"}],
    }


# code, bad change, good change, text the diagnostic must sit on
CASES = [
    ("WR101", _set(["steps", 0, "title"], 3), _set(["steps", 0, "title"], "Three"), "3"),
    ("WR102", _set(["steps", 0, "promt"], "x"), _set(["steps", 0, "guidance"], ["x"]), '"promt"'),
    ("WR103", lambda w: w["steps"][0].pop("prompt"), lambda w: None, "{"),
    (
        "WR104",
        _set(["steps", 1, "onFailure"], "contineu"),
        _set(["steps", 1, "onFailure"], "continue"),
        '"contineu"',
    ),
    (
        "WR105",
        _set(["steps", 2, "id"], "Review_It"),
        _set(["steps", 2, "id"], "review-it"),
        '"Review_It"',
    ),
    (
        "WR106",
        _set(["steps", 1, "run", "timeoutSeconds"], -1),
        _set(["steps", 1, "run", "timeoutSeconds"], 1),
        "-1",
    ),
    ("WR201", _set(["steps", 2, "id"], "plan"), _set(["steps", 2, "id"], "review-2"), '"plan"'),
    (
        "WR202",
        lambda w: w["steps"].append({**LOOP, "body": "reveiw"}),
        lambda w: w["steps"].append(LOOP),
        '"reveiw"',
    ),
    (
        "WR203",
        lambda w: w["steps"].append({**LOOP, "loop": {"type": "until"}}),
        lambda w: w["steps"].append(LOOP),
        '"loop"',
    ),
    (
        "WR204",
        lambda w: w["steps"].append(INLINE_LOOP),
        lambda w: w["steps"].append({**INLINE_LOOP, "body": "plan"}),
        '"loop"',
    ),
    (
        "WR205",
        lambda w: w["steps"].append({**LOOP, "loop": {"type": "forEach"}}),
        lambda w: w["steps"].append({**LOOP, "loop": {"type": "forEach", "items": ["a"]}}),
        '"loop"',
    ),
    (
        "WR301",
        _set(["steps", 2, "prompt"], "See {{steps.plna.output}}"),
        _set(["steps", 2, "prompt"], "See {{steps.plan.output}}"),
        "{{steps.plna.output}}",
    ),
    (
        "WR302",
        _set(["steps", 0, "prompt"], "See {{steps.review.output}}"),
        _set(["steps", 0, "prompt"], "See {{context.x}}"),
        "{{steps.review.output}}",
    ),
    (
        "WR303",
        _set(["steps", 0, "prompt"], "For {{parameters.tagret}}"),
        _set(["steps", 0, "prompt"], "For {{parameters.target}}"),
        "{{parameters.tagret}}",
    ),
    (
        "WR304",
        _set(["steps", 1, "run", "env"], {"T": "{{secrets.OTHER}}"}),
        _set(["steps", 1, "run", "env"], {"T": "{{secrets.API_TOKEN}}"}),
        "{{secrets.OTHER}}",
    ),
    (
        "WR305",
        _set(["steps", 0, "prompt"], "Hi {{secret.API_TOKEN}}"),
        _set(["steps", 0, "prompt"], "Hi {{context.who}}"),
        "{{secret.API_TOKEN}}",
    ),
    (
        "WR401",
        _set(["steps", 2, "runCondition"], {"var": "x", "matches": "(a"}),
        _set(["steps", 2, "runCondition"], {"var": "x", "matches": "(a)"}),
        '"(a"',
    ),
    (
        "WR402",
        _set(["steps", 2, "runCondition"], {"var": "x", "gt": "5"}),
        _set(["steps", 2, "runCondition"], {"var": "x", "gt": 5}),
        '"5"',
    ),
    (
        "WR403",
        _set(
            ["steps", 0, "validationCriteria"],
            {"type": "schema", "schema": {"type": "nope"}, "message": "m"},
        ),
        _set(
            ["steps", 0, "validationCriteria"],
            {"type": "schema", "schema": {"type": "object"}, "message": "m"},
        ),
        None,
    ),
    (
        "WR404",
        _set(
            ["steps", 0, "validationCriteria"],
            {"type": "length", "min": 9, "max": 2, "message": "m"},
        ),
        _set(
            ["steps", 0, "validationCriteria"],
            {"type": "length", "min": 2, "max": 9, "message": "m"},
        ),
        "9",
    ),
    (
        "WR406",
        _set(
            ["parameters"],
            {"type": "object", "properties": {"target": {"$ref": "https://example.com/p.json"}}},
        ),
        _set(
            ["parameters"],
            {
                "type": "object",
                "properties": {"target": {"$ref": "#/$defs/target"}},
                "$defs": {"target": {"type": "string"}},
            },
        ),
        '"https://example.com/p.json"',
    ),
    (
        "WR406",
        _set(
            ["steps", 0, "validationCriteria"],
            {"type": "schema", "schema": {"$ref": "file:///etc/passwd"}, "message": "m"},
        ),
        _set(
            ["steps", 0, "validationCriteria"],
            {"type": "schema", "schema": {"type": "object"}, "message": "m"},
        ),
        '"file:///etc/passwd"',
    ),
    ("WR501", lambda w: w["steps"][1]["run"].pop("timeoutSeconds"), lambda w: None, '"run"'),
    (
        "WR502",
        _set(["steps", 1, "run", "command"], ["sh", "-c", "make {{parameters.target}}"]),
        _set(
            ["steps", 1, "run", "command"], ["sh", "-c", 'make "$1"', "sh", "{{parameters.target}}"]
        ),
        '"make {{parameters.target}}"',
    ),
    (
        "WR206",
        lambda w: w["steps"].append(MIXED_GROUP),
        lambda w: w["steps"].append({k: v for k, v in MIXED_GROUP.items() if k != "steps"}),
        '"steps"',
    ),
    (
        "WR306",
        _set(["steps", 0, "prompt"], "Progress {{(done / total * 100).toFixed(1)}}%"),
        _set(["steps", 0, "prompt"], "Progress {{context.percent}}%"),
        "{{(done / total * 100).toFixed(1)}}",
    ),
    (
        "WR405",
        _set(
            ["steps", 0, "validationCriteria"],
            {"type": "regex", "pattern": "^(?!.*TODO)", "message": "m"},
        ),
        _set(
            ["steps", 0, "validationCriteria"],
            {"not": {"type": "contains", "value": "TODO", "message": "m"}, "message": "m"},
        ),
        '"^(?!.*TODO)"',
    ),
    (
        "WR701",
        _set(["steps", 0, "functionReferences"], ["cheks()"]),
        _set(["steps", 0, "functionReferences"], ["checks()"]),
        '"cheks()"',
    ),
    (
        "WR702",
        _set(["steps", 0, "assessmentRefs"], ["qualty"]),
        _set(["steps", 0, "assessmentRefs"], ["quality"]),
        '"qualty"',
    ),
    (
        "WR704",
        _set(["steps", 0, "promptFragments"], [FRAGMENT, FRAGMENT]),
        _set(["steps", 0, "promptFragments"], [FRAGMENT, {**FRAGMENT, "id": "scope-large"}]),
        '"scope"',
    ),
    (
        "WR705",
        _set(["steps", 0, "outputContract"], {"contractRef": "wr.contracts.loop_ctrl"}),
        _set(["steps", 0, "outputContract"], {"contractRef": "wr.contracts.loop_control"}),
        '"wr.contracts.loop_ctrl"',
    ),
    (
        "WR407",
        _set(["steps", 0, "validationCriteria"], []),
        _set(["steps", 0, "validationCriteria"], [{"type": "length", "min": 1, "message": ""}]),
        "[]",
    ),
    (
        "WR408",
        _set(["steps", 0, "validationCriteria"], [{"type": "contains", "message": "Say it"}]),
        _set(
            ["steps", 0, "validationCriteria"], [{"type": "contains", "value": "it", "message": ""}]
        ),
        '{\n          "type": "contains",\n          "message": "Say it"\n        }',
    ),
    (
        "WR706",
        _set(["references"], [REFERENCE, {**REFERENCE, "title": "Again"}]),
        _set(["references"], [REFERENCE, {**REFERENCE, "id": "api-guide"}]),
        '"api-schema"',
    ),
    (
        "WR707",
        lambda w: w["assessments"].append(copy.deepcopy(w["assessments"][0])),
        lambda w: w["assessments"].append({**copy.deepcopy(w["assessments"][0]), "id": "risk"}),
        '"quality"',
    ),
    (
        "WR708",
        _set(["steps", 0], {**PLAN_ASSESSED, "assessmentConsequences": [FOLLOWUP("medium")]}),
        _set(["steps", 0], {**PLAN_ASSESSED, "assessmentConsequences": [FOLLOWUP("low")]}),
        '"medium"',
    ),
    (
        "WR710",
        lambda w: w["steps"].append(DELEGATION("demo")),
        lambda w: w["steps"].append(DELEGATION("wr.routine-ideation")),
        '"demo"',
    ),
    ("WR601", _set(["id"], "other-name"), _set(["id"], "demo"), '"other-name"'),
    ("WR602", _set(["version"], "1.0"), _set(["version"], "1.0.0-rc.1+build.5"), '"1.0"'),
]


@pytest.mark.parametrize(
    ("code", "bad", "good", "on_text"), [pytest.param(*case, id=case[0]) for case in CASES]
)
def test_code_bad_and_good(code, bad, good, on_text):
    result = lint(mutate(bad))
    found = [d for d in result.diagnostics if d.code == code]
    assert found, f"{code} not reported; got {[(d.code, d.message) for d in result.diagnostics]}"
    if on_text is not None:
        text = result.document.text
        assert text[found[0].span.start : found[0].span.end] == on_text
    clean = lint(mutate(good))
    assert [d.code for d in clean.diagnostics] == [], [d.message for d in clean.diagnostics]


def test_duplicate_step_ids_point_at_both():
    result = lint(mutate(_set(["steps", 2, "id"], "plan")))
    dups = [d for d in result.diagnostics if d.code == "WR201"]
    assert len(dups) == 2
    assert {d.pointer for d in dups} == {"/steps/0/id", "/steps/2/id"}
    assert all(len(d.related) == 1 for d in dups)


def test_typo_messages_name_the_closest_valid_name_and_offer_a_fix():
    result = lint(mutate(_set(["steps", 0, "promt"], "x")))
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


def test_reference_inside_string_with_escapes_is_placed_exactly():
    text = json.dumps(mutate(_set(["steps", 0, "prompt"], 'Say "hi"\n then {{parameters.nope}}')))
    result = lint_text(text, "demo.json")
    [bad] = [d for d in result.diagnostics if d.code == "WR303"]
    assert text[bad.span.start : bad.span.end] == "{{parameters.nope}}"


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


def test_template_calls_name_routines_of_the_catalog():
    from workrail_engine.lint.upstream import template_call_diagnostics

    caller = mutate(
        _set(["steps", 0], {"id": "plan", "title": "Plan", "templateCall": {"templateId": "x"}})
    )

    def calling(template_id):
        caller["steps"][0]["templateCall"]["templateId"] = template_id
        return parse_document(json.dumps(caller, indent=2), "demo.json")

    bad = calling("wr.templates.routine.ideation")
    [found] = template_call_diagnostics([bad], {"demo", "routine-other"})["demo.json"]
    assert found.code == "WR703" and found.pointer == "/steps/0/templateCall/templateId"
    assert bad.text[found.span.start : found.span.end] == '"wr.templates.routine.ideation"'
    assert "wr.routine-ideation" in found.message
    # each of upstream's three spellings of the routine's id provides the template
    for routine_id in ("wr.routine-ideation", "routine-ideation", "ideation"):
        assert template_call_diagnostics([bad], {routine_id}) == {}
    # a template id that is no routine template at all
    [other] = template_call_diagnostics([calling("wr.templates.other")], {"other"})["demo.json"]
    assert "templates are routines" in other.message
    # and the single-file lint has no opinion: it cannot see the catalog
    assert [d.code for d in lint(caller).diagnostics] == []


def test_bare_template_names_are_context_variables_not_errors():
    result = lint(mutate(_set(["steps", 0, "prompt"], "Item {{currentItem}} of {{items.length}}")))
    assert result.diagnostics == []
    near = lint(mutate(_set(["steps", 0, "prompt"], "Token {{secret.API_TOKEN}}")))
    [warning] = near.diagnostics
    assert (warning.code, warning.severity.value) == ("WR305", "warning")
    assert "{{secrets.API_TOKEN}}" in warning.message


def test_braces_in_titles_and_guidance_get_no_hint():
    def change(w):
        w["steps"][0]["title"] = "Plan {{i + 1}}"
        w["steps"][0]["guidance"] = ['flowchart A{{"Pick"}}']

    assert lint(mutate(change)).diagnostics == []


def test_a_mixed_parallel_group_gets_one_clear_message():
    result = lint(mutate(lambda w: w["steps"].append(MIXED_GROUP)))
    assert [d.code for d in result.diagnostics] == ["WR206"]
    assert "not both" in result.diagnostics[0].message


def test_every_code_the_engine_emits_is_documented_and_tested():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
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
    tested = {case[0] for case in CASES} | {
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
    # the compile step's codes have their bad/good cases in test_compile.py
    tested |= set(re.findall(r'"(WR8\d\d)"', (root / "tests/engine/test_compile.py").read_text()))
    assert documented <= tested, f"without a bad/good test: {sorted(documented - tested)}"


@pytest.mark.parametrize(
    "condition",
    [
        pytest.param({"var": "x", "gt": "5"}, id="gt-string"),
        pytest.param({"var": "x", "in": "abc"}, id="in-string"),
        pytest.param({"and": [{"var": "x", "lte": True}]}, id="nested-lte-bool"),
    ],
)
def test_operand_type_problems_are_reported_once(condition):
    result = lint(mutate(_set(["steps", 2, "runCondition"], condition)))
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


def test_a_key_of_another_step_kind_is_not_called_a_typo():
    result = lint(mutate(_set(["steps", 0, "onFailure"], "continue")))
    [unknown] = [d for d in result.diagnostics if d.code == "WR102"]
    assert unknown.message == "'onFailure' belongs to a command step, not to a prompt step"
    assert unknown.fixes == ()


def test_a_shell_string_command_gets_an_argv_fix():
    result = lint(mutate(_set(["steps", 1, "run", "command"], 'make test -k "a b"')))
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
    result = lint(mutate(_set(["steps", 1, "run", "timeoutSeconds"], 0)))
    assert [d.message for d in result.diagnostics] == ["'timeoutSeconds' must be greater than 0"]


def test_a_step_referring_to_its_own_output():
    result = lint(mutate(_set(["steps", 0, "prompt"], "Improve {{steps.plan.output}}")))
    [self_ref] = [d for d in result.diagnostics if d.code == "WR302"]
    assert "refers to this step itself" in self_ref.message


def test_the_lint_package_has_no_import_circle():
    """Imports inside functions count too: a circle hidden by a late import is still a circle."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "workrail_engine" / "lint"
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


def test_missing_prompt_and_missing_group_members_name_every_alternative():
    no_prompt = lint(mutate(lambda w: w["steps"][0].pop("prompt")))
    [missing] = no_prompt.diagnostics
    assert "'prompt', 'promptBlocks' or 'templateCall'" in missing.message
    group = {"id": "together", "type": "parallel", "title": "Together"}
    no_members = lint(mutate(lambda w: w["steps"].append(group)))
    [missing] = no_members.diagnostics
    assert "'steps'" in missing.message and "'parallelDelegations'" in missing.message


@pytest.mark.parametrize("text", ["{{steps.}}", "{{parameters. target}}", "{{secrets..X}}"])
def test_a_malformed_namespaced_reference_is_still_an_error(text):
    [found] = lint(mutate(_set(["steps", 2, "prompt"], f"See {text}"))).diagnostics
    assert (found.code, found.severity.value) == ("WR305", "error")


def test_the_file_name_fix_is_offered_only_when_the_name_is_an_id():
    workflow = mutate(_set(["id"], "wr.bug-investigation"))
    assert lint(workflow, "wr.bug-investigation.json").diagnostics == []  # id = file name
    [differs] = lint(workflow, "bug-investigation.agentic.v2.json").diagnostics
    assert differs.code == "WR601" and differs.fixes == ()
    [fixable] = lint(workflow, "bug-investigation.json").diagnostics
    assert fixable.fixes and fixable.fixes[0].edits[0].new_text == '"bug-investigation"'


def test_findings_past_the_cap_are_one_wr009_that_keeps_the_worst_severity():
    from workrail_engine.limits import MAX_FINDINGS_PER_FILE as CAP

    # CAP hints (info, {{a b}} is no reference) come first in the text, 5 errors after them
    prompt = "{{a b}} " * CAP + "{{parameters.nope}} " * 5
    result = lint(mutate(_set(["steps", 0, "prompt"], prompt)))
    *shown, summary = result.diagnostics
    assert len(shown) == CAP and {d.code for d in shown} == {"WR306"}
    assert (summary.code, summary.severity.value) == ("WR009", "error")
    assert summary.message.startswith("5 more findings") and "WR303" in summary.message
    assert summary.data == {"notShown": 5}
    assert result.document.text[summary.span.start : summary.span.end] == "{{parameters.nope}}"

    # at the cap exactly: every finding listed, no WR009
    exact = lint(mutate(_set(["steps", 0, "prompt"], "{{a b}} " * (CAP - 1) + "{{x y}}")))
    assert len(exact.diagnostics) == CAP and "WR009" not in {d.code for d in exact.diagnostics}


def test_many_findings_in_one_string_are_each_placed_on_their_own_text():
    """One offset table per string (it used to be rebuilt per finding): spans stay exact."""
    prompt = " ".join(f"{{{{parameters.nope{i}}}}} \u00e9" for i in range(50))
    result = lint(mutate(_set(["steps", 0, "prompt"], json.loads(f'"{prompt}"'))))
    text = result.document.text
    placed = [text[d.span.start : d.span.end] for d in result.diagnostics if d.code == "WR303"]
    assert placed == [f"{{{{parameters.nope{i}}}}}" for i in range(50)]


def test_the_size_check_compiles_only_files_whose_compile_can_add_text(monkeypatch):
    """WR811's check compiles a file only when something in it makes the compile add text: the
    word "features" in a prompt does not (it compiled a quarter of bench/validate.py's files for
    nothing); the workflow's own "features" key does, however the text spells it."""
    import workrail_engine.compile
    from workrail_engine.lint import compiled_size

    compiled: list[str] = []
    real = workrail_engine.compile.compile_workflow

    def counting(workflow, routines=None):
        compiled.append(workflow["id"])
        return real(workflow, routines)

    monkeypatch.setattr(workrail_engine.compile, "compile_workflow", counting)
    steps = [{"id": "a", "title": "A", "prompt": "List the features the change adds."}]
    prose = {"id": "prose", "name": "P", "version": "1.0.0", "steps": steps}
    blocks = [{"id": "b", "title": "B", "promptBlocks": {"goal": "Do it."}}]
    keyed = {"id": "keyed", "name": "K", "version": "1.0.0", "features": [], "steps": blocks}
    # spelled with escapes, neither key is in the text as written: the value has them
    escaped = (
        json.dumps(keyed)
        .replace('"features"', '"feat\\u0075res"')
        .replace('"promptBlocks"', '"promptBl\\u006fcks"')
    )
    documents = [
        parse_document(json.dumps(prose), "prose.json"),
        parse_document(escaped, "keyed.json"),
    ]
    assert compiled_size.compiled_size_diagnostics(documents) == {}
    assert compiled == ["keyed"]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_the_size_check_sees_ref_tokens_written_with_spaces(fmt):
    """The compile step reads ``{{ wr.refs.x }}`` (spaces inside the braces) as a ref token, so
    the size check must compile a file whose only growth is such tokens (it looked for "{{wr."
    alone, and a file that compiles to 2.5 MB of one step passed `workrail validate`)."""
    from workrail_engine.lint import compiled_size

    prompt = "{{ wr.refs.adversarial_challenge_rules }} " * 4_000  # 634 characters each
    workflow = {
        "id": "spaced",
        "name": "S",
        "version": "1.0.0",
        "steps": [{"id": "a", "title": "A", "prompt": prompt}],
    }
    text = yaml.safe_dump(workflow, width=1 << 30) if fmt == "yaml" else json.dumps(workflow)
    document = parse_document(text, f"spaced.{fmt}")
    found = compiled_size.compiled_size_diagnostics([document])["spaced." + fmt]
    assert [(d.code, d.pointer) for d in found] == [("WR811", "/steps/0/prompt")]


_TOKEN = "{{wr.refs.adversarial_challenge_rules}} "
_YAML_HEAD = 'id: escaped\nname: E\nversion: 1.0.0\nsteps:\n- id: a\n  title: A\n  prompt: "'


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # "wr." as a JSON \u escape of "r"
        (
            "escaped.json",
            '{"id": "escaped", "name": "E", "version": "1.0.0", "steps": [{"id": "a", '
            '"title": "A", "prompt": "' + _TOKEN.replace("wr.", "w\\u0072.") * 4_000 + '"}]}',
        ),
        # the same in a YAML double-quoted scalar, with \x
        (
            "escaped.yaml",
            _YAML_HEAD + _TOKEN.replace("wr.", "w\\x72.") * 4_000 + '"\n',
        ),
        # and split by a backslash that joins two lines of a double-quoted scalar
        (
            "joined.yaml",
            _YAML_HEAD + _TOKEN.replace("wr.", "w\\\n    r.") * 4_000 + '"\n',
        ),
    ],
)
def test_the_size_check_sees_marks_spelled_with_escapes(name, text):
    """A token whose letters are escapes is not in the text as written, yet the compile step
    reads the value and expands it: such a file must be compiled to be measured (it passed
    `workrail validate` though it compiles to 2.5 MB in one step)."""
    from workrail_engine.lint import compiled_size

    document = parse_document(text, name)
    assert document.value["steps"][0]["prompt"].startswith(_TOKEN)  # the value has the token
    found = compiled_size.compiled_size_diagnostics([document])[name]
    assert [(d.code, d.pointer) for d in found] == [("WR811", "/steps/0/prompt")]
