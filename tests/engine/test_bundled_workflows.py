"""The workflows shipped in workflows/: valid, lint-clean, and together covering the format."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from workrail_engine.definition.steps import walk_steps
from workrail_engine.evaluation.templates import find_references
from workrail_engine.schema import SCHEMA_ID, load_schema

WORKFLOWS = Path(__file__).parent.parent.parent / "workflows"
EXPECTED_IDS = {
    "coding-task",
    "mr-review",
    "bug-investigation",
    "adaptive-ticket-creation",
    "presentation-creation",
    "workflow-for-workflows",
    "ai-task-implementation",
    "python-quality-gate",
}
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$"
)
FILES = sorted(WORKFLOWS.glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def all_workflows() -> list[dict[str, Any]]:
    return [load(path) for path in FILES]


def test_the_expected_workflows_are_bundled():
    assert {path.stem for path in FILES} == EXPECTED_IDS
    assert sorted(p.name for p in WORKFLOWS.iterdir()) == sorted(
        p.name for p in FILES
    )  # nothing else in there


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_workflow_validates_against_the_schema(path):
    validator = jsonschema_rs.validator_for(load_schema())
    errors = [f"{list(e.instance_path)}: {e.message}" for e in validator.iter_errors(load(path))]
    assert errors == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_workflow_metadata(path):
    workflow = load(path)
    assert workflow["id"] == path.stem
    assert workflow["$schema"] == SCHEMA_ID
    assert SEMVER.match(workflow["version"]), workflow["version"]
    assert workflow["category"]
    assert len(workflow["description"]) > 40


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_workflow_is_lint_clean(path):
    from workrail_engine.lint import lint_path

    result = lint_path(path)
    problems = [(d.code, d.pointer, d.message) for d in result.errors + result.warnings]
    assert problems == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_templates_reference_declared_names_and_earlier_steps(path):
    workflow = load(path)
    parameters = set(workflow.get("parameters", {}).get("properties", {}))
    secrets = set(workflow.get("secrets", []))
    seen: set[str] = set()
    for site in walk_steps(workflow):
        for text in _strings(site.step, skip=("steps", "body")):
            for ref in find_references(text):
                name = ref.path[0] if ref.path else None
                if ref.namespace == "parameters":
                    assert name in parameters, (site.pointer, ref.text)
                elif ref.namespace == "secrets":
                    assert name in secrets, (site.pointer, ref.text)
                elif ref.namespace == "steps":
                    assert name in seen, (site.pointer, ref.text)
                else:
                    assert ref.namespace == "context", (site.pointer, ref.text)
        seen.add(site.id)


LOOP_VARIABLE_KEYS = ("iterationVar", "itemVar", "indexVar")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_workflow_declares_the_context_it_reads_and_asks_for(path):
    """Every context variable a condition, a loop's items or a template reads is declared with a
    type and a description in our words, asked of the agent by a step's `sets`, and named in the
    `reads` of a step; nothing is declared that no step sets."""
    workflow = load(path)
    declared = workflow["context"]
    loop_variables = {value for key, value in _nodes(workflow) if key in LOOP_VARIABLE_KEYS}
    read = {
        condition["var"].split(".")[0]
        for condition in _conditions([workflow])
        if not condition["var"].startswith("parameters.")
    }
    read |= {value for key, value in _nodes(workflow) if key == "items" and isinstance(value, str)}
    sets: set[str] = set()
    reads: set[str] = set()
    for site in walk_steps(workflow):
        sets.update(site.step.get("sets", []))
        reads.update(site.step.get("reads", []))
        for text in _strings(site.step, skip=("steps", "body")):
            read |= {ref.path[0] for ref in find_references(text) if ref.namespace == "context"}
    read -= loop_variables
    assert read <= set(declared), read - set(declared)
    assert set(declared) == sets and read <= reads, (set(declared) ^ sets, read - reads)
    for name, schema in declared.items():
        assert schema["type"] and len(schema["description"]) > 20, name


def _strings(value: Any, skip: tuple[str, ...] = ()) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in skip:
                yield from _strings(item)


def test_prompts_are_substantial():
    for workflow in all_workflows():
        for site in walk_steps(workflow):
            if site.kind == "prompt":
                prompt = site.step["prompt"]
                sentences = len(re.findall(r"[.!?:](?:\s|$)", prompt))
                assert len(prompt) >= 200 and sentences >= 3, (
                    workflow["id"],
                    site.id,
                    len(prompt),
                    sentences,
                )


def test_ai_task_implementation_matches_the_specs_example():
    workflow = load(WORKFLOWS / "ai-task-implementation.json")
    assert workflow["name"] == "AI Task Prompt Workflow"
    assert (
        workflow["description"]
        == "Guides through task understanding → planning → implementation → verification"
    )
    assert (workflow["category"], workflow["version"]) == ("development", "1.0.0")
    assert [s["id"] for s in workflow["steps"]] == ["understand", "plan", "implement", "verify"]
    assert workflow["steps"][0]["requireConfirmation"] is True


# --- together the workflows exercise the whole format ---------------------------------------------


def _nodes(value: Any) -> Iterator[tuple[str | None, Any]]:
    """(key, value) for every value in a document, the key being the one that names it."""
    stack: list[tuple[str | None, Any]] = [(None, value)]
    while stack:
        key, node = stack.pop()
        yield key, node
        if isinstance(node, dict):
            stack.extend(node.items())
        elif isinstance(node, list):
            stack.extend((key, item) for item in node)


def _conditions(workflows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    roots = [
        v
        for w in workflows
        for k, v in _nodes(w)
        if k in ("runCondition", "condition") and isinstance(v, dict)
    ]
    found = []
    for root in roots:
        found.extend(v for _, v in _nodes(root) if isinstance(v, dict) and "var" in v)
    return found


def _rules(workflows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        v
        for w in workflows
        for k, v in _nodes(w)
        if isinstance(v, dict)
        and v.get("type") in ("contains", "regex", "length", "schema")
        and "message" in v
    ]


def test_together_they_use_every_condition_operator():
    from workrail_engine.evaluation.conditions import OPERATORS

    used = {key for c in _conditions(all_workflows()) for key in c if key != "var"}
    assert used == set(OPERATORS)
    run_condition_operators = {
        key
        for w in all_workflows()
        for k, v in _nodes(w)
        if k == "runCondition"
        for c in _conditions([{"runCondition": v}])
        for key in c
        if key != "var"
    }
    assert len(run_condition_operators) >= 6


def test_together_they_use_every_step_and_loop_kind():
    sites = [site for w in all_workflows() for site in walk_steps(w)]
    assert {site.kind for site in sites} == {"prompt", "command", "parallel", "loop"}
    loop_types = {site.step["loop"]["type"] for site in sites if site.kind == "loop"}
    assert loop_types == {"while", "until", "for", "forEach"}
    assert any(site.step.get("type") is None and site.kind == "prompt" for site in sites)


def test_together_they_use_every_rule_type_and_composition():
    workflows = all_workflows()
    rules = _rules(workflows)
    assert {r["type"] for r in rules} == {"contains", "regex", "length", "schema"}
    assert any(r["type"] == "regex" and r.get("flags") for r in rules)
    assert any("condition" in r for r in rules)
    compositions = {
        k for w in workflows for k, v in _nodes(w) if k in ("and", "or", "not") and v is not None
    }
    criteria_roots = [v for w in workflows for k, v in _nodes(w) if k == "validationCriteria"]
    in_criteria = {
        k for root in criteria_roots for k, _ in _nodes(root) if k in ("and", "or", "not")
    }
    assert in_criteria == {"and", "or", "not"} and compositions >= in_criteria


def test_together_they_use_parameters_secrets_and_command_features():
    gate = load(WORKFLOWS / "python-quality-gate.json")
    assert gate["secrets"] == ["PYPI_TOKEN"]
    assert set(gate["parameters"]["properties"]) >= {"path", "publish"}
    group = gate["steps"][0]
    assert group["type"] == "parallel" and [s["id"] for s in group["steps"]] == [
        "lint",
        "type-check",
        "tests",
    ]
    assert all(s["run"]["timeoutSeconds"] > 0 for s in group["steps"])
    publish = next(s for s in gate["steps"] if s["id"] == "publish")
    assert publish["runCondition"] == {"var": "parameters.publish", "equals": True}
    assert "{{secrets.PYPI_TOKEN}}" in publish["run"]["env"].values()
    assert not any(
        "{{secrets." in arg for arg in publish["run"]["command"]
    )  # secrets go through the environment


# --- the output rules accept a good answer and reject a bad one ------------------------------------


def _criteria(workflow_id: str, step_id: str) -> Any:
    for site in walk_steps(load(WORKFLOWS / f"{workflow_id}.json")):
        if site.id == step_id:
            return site.step["validationCriteria"]
    raise AssertionError(f"{workflow_id} has no step {step_id}")


SAMPLES = [
    pytest.param(
        "ai-task-implementation",
        "understand",
        {},
        "## Requirements\n1. Add retries\n## Affected files\n- client.py\n## Assumptions\n- none\n## Open questions\n- none",
        "I read the task and it looks fine.",
        id="understand",
    ),
    pytest.param(
        "ai-task-implementation",
        "plan",
        {},
        "1. Add a retry helper in client.py, tested by test_retry.\n2. Use it in fetch().\n3. Verify with pytest -q and ruff check.\n"
        + "Risks: none of note. " * 5,
        "We will add retries and test them.",
        id="plan",
    ),
    pytest.param(
        "mr-review",
        "gather-context",
        {},
        '{"summary": "Adds retry logic to the HTTP client", "files": ["client.py", "test_client.py"], "riskLevel": "medium"}',
        '{"summary": "Adds retry logic to the HTTP client", "files": [], "riskLevel": "huge"}',
        id="mr-file-list",
    ),
    pytest.param(
        "mr-review",
        "review-file",
        {},
        "[blocking] client.py:42 - retries never stop - add a maximum",
        "Looks good to me.",
        id="mr-finding-format",
    ),
    pytest.param(
        "mr-review",
        "write-review",
        {"riskLevel": "high"},
        "Summary of the change. " * 12
        + "\n## Testing\nCovered by test_retry.\nVerdict: Request changes",
        "Summary of the change. " * 12 + "\nVerdict: Request changes",
        id="mr-high-risk-needs-testing",
    ),
    pytest.param(
        "bug-investigation",
        "write-report",
        {"reproducible": True},
        '```json\n{"rootCause": "The cache key ignores the locale, so users see other locales.", "fix": "Include the locale in the key", "testsAdded": ["test_cache_key_locale"], "confidence": "high"}\n```',
        "The root cause was the cache key.",
        id="bug-report-json",
    ),
    pytest.param(
        "bug-investigation",
        "fix-bug",
        {},
        "Fixed the key and added test_cache_key_locale.",
        "Fixed it; marked test_flaky with @skip for now.",
        id="no-skipped-tests",
    ),
    pytest.param(
        "adaptive-ticket-creation",
        "acceptance-criteria",
        {"ticketType": "feature"},
        "Given a logged-in user\nWhen they export\nThen a CSV is downloaded",
        "- [ ] Export works",
        id="feature-criteria",
    ),
    pytest.param(
        "presentation-creation",
        "define-goal",
        {},
        "Goal: the team adopts the new release process.",
        "This talk is about releases.",
        id="presentation-goal",
    ),
    pytest.param(
        "workflow-for-workflows",
        "run-validator",
        {},
        "1 file passed",
        "I fixed everything.",
        id="validator-summary",
    ),
    pytest.param(
        "python-quality-gate",
        "tests",
        {},
        "........\n8 passed in 0.42s",
        "6 passed, 2 failed in 0.40s",
        id="pytest-summary",
    ),
]


@pytest.mark.parametrize(("workflow_id", "step_id", "context", "good", "bad"), SAMPLES)
def test_output_rules_accept_good_and_reject_bad_output(workflow_id, step_id, context, good, bad):
    from workrail_engine.evaluation.rules import validate_output

    criteria = _criteria(workflow_id, step_id)
    accepted = validate_output(criteria, good, context)
    assert accepted.valid, accepted.issues
    rejected = validate_output(criteria, bad, context)
    assert not rejected.valid and rejected.issues
