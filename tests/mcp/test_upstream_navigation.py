"""Upstream 3.x constructs served end to end: the stateless next step and a run, over stdio.

Each fixture in tests/fixtures/upstream_nav is walked through ``workflow_next`` by the MCP SDK's
own client against a real server process, asserting the prompt text, the confirmation flag, the
step order and the notes; then every fixture and every bundled workflow is walked twice — once
step by step, once as a run answered with ``continue_workflow`` — and both must serve the same
prompts (one engine function renders both).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client, StdioServerParameters

from tests.context_answers import names_asked
from tests.mcp.conftest import server_env
from tests.mcp.shared_server import kept_open
from workrail_engine.compile.refs import SNIPPETS

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "upstream_nav"
BUNDLED = ROOT / "workflows"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixtures, plus the bundled workflows without their output checks: a run only moves on
    when an output passes them, and the walks hand over placeholder outputs (the prompts, titles
    and confirmation flags compared are untouched; the project copy shadows the bundled one)."""
    root = tmp_path_factory.mktemp("nav") / "project"
    shutil.copytree(FIXTURES, root / "workflows")
    for path in BUNDLED.glob("*.json"):
        definition = json.loads(path.read_text())
        _drop_checks(definition["steps"])
        (root / "workflows" / path.name).write_text(json.dumps(definition))
    return root


def _drop_checks(steps: list) -> None:
    for step in steps:
        step.pop("validationCriteria", None)
        for key in ("steps", "body"):
            if isinstance(step.get(key), list):
                _drop_checks(step[key])


def client(project: Path, tmp: Path) -> Client:
    """The real stdio server of ``project`` as the SDK's client launches it (``TOKEN`` set in
    its environment: no served text may carry it)."""
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-m", "workrail_mcp", "--project", str(project)],
            env=server_env(tmp, TOKEN="s3cret-value"),
            cwd=str(tmp),
        )
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def c(project: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """One server for the module: the walks are stateless or runs of their own (distinct run
    ids in one store), so no test can see another's state; each start costs ~1.4 s of CPU."""
    async with kept_open(lambda: client(project, tmp_path_factory.mktemp("nav-server"))) as c:
        yield c


async def next_of(c: Client, workflow: str, done: list[str], ctx: dict, **extra: Any) -> dict:
    args = {"workflowId": workflow, "completedSteps": done, "context": ctx, **extra}
    result = await c.call_tool("workflow_next", args)
    assert not result.is_error, result.content[0].text
    return result.structured_content


# --- one construct at a time, step by step -------------------------------------------------


async def test_prompt_blocks_features_refs_bindings_and_a_routine(c):
    first = await next_of(c, "nav-blocks", [], {"feature": "export"})
    step = first["step"]
    assert step["title"] == "Plan export"
    assert step["prompt"].startswith(
        "## Goal\nPlan export and have it checked by routine-nav-check.\n\n"
        "## Constraints\n- Keep the public API\n- " + SNIPPETS["wr.refs.memory_query"]
    )
    assert "## Procedure\n1. Read the code\n2. Write the plan\n3. " in step["prompt"]
    assert (
        "## Output Required\n- **plan**: numbered steps\n\n## Verify\n- Every step is testable\n- "
        in step["prompt"]
    )
    assert "promptBlocks" not in step
    second = await next_of(c, "nav-blocks", ["plan"], first["context"])
    assert second["step"]["id"] == "check.inspect"
    assert second["step"]["title"] == "Inspect the plan"
    assert second["step"]["prompt"] == "Inspect the plan to depth 2 for export."
    assert "- Report facts, not opinions." in second["guidance"]["prompt"]
    third = await next_of(c, "nav-blocks", ["plan", "check.inspect"], second["context"])
    assert third["step"]["id"] == "check.verdict"
    done = await next_of(c, "nav-blocks", ["plan", "check.inspect", "check.verdict"], {})
    assert done["isComplete"] is True
    as_written = await c.call_tool("workflow_get", {"id": "nav-blocks"})
    written = json.loads((FIXTURES / "nav-blocks.json").read_text())
    assert as_written.structured_content == written  # the file as written, not compiled


async def test_templates_render_with_visible_unset_markers(c):
    ctx = {"ticket": {"id": "T-7", "title": "Fix login"}, "owner": "ana", "TOKEN": "leak?"}
    first = await next_of(c, "nav-templates", [], ctx)
    step = first["step"]
    assert step["title"] == "Work on T-7"
    assert step["prompt"] == (
        "Ticket T-7 (Fix login) for ana; missing: [unset: nothing]; ratio {{(a / b).toFixed(1)}}; "
        'graph A{{"x"}}; token {{secrets.TOKEN}}.'
    )
    assert "- Owner is ana." in first["guidance"]["prompt"]


async def test_fragments_and_confirmation_rules(c):
    thorough = await next_of(c, "nav-fragments", [], {"rigor": " thorough", "target": "auth"})
    quick = await next_of(c, "nav-fragments", [], {"rigor": "quick"})
    gate_high = await next_of(c, "nav-fragments", ["scope"], {"risk": 9})
    gate_low = await next_of(c, "nav-fragments", ["scope"], {"risk": 2})
    always = await next_of(c, "nav-fragments", ["scope", "gate"], {})
    never = await next_of(c, "nav-fragments", ["scope", "gate", "always"], {"risk": 9})
    assert thorough["step"]["prompt"] == (
        "Scope the work.\n\nAlways: note assumptions.\n\nThorough: read every caller of auth."
    )
    assert thorough["guidance"]["requiresConfirmation"] is True
    assert (
        quick["step"]["prompt"]
        == "Scope the work.\n\nAlways: note assumptions.\n\nQuick: skim only."
    )
    assert quick["guidance"]["requiresConfirmation"] is False
    assert gate_high["guidance"]["requiresConfirmation"] is True
    assert gate_high["guidance"]["confirmationKind"] == "human_approval"
    assert gate_low["guidance"]["requiresConfirmation"] is False
    assert "confirmationKind" not in gate_low["guidance"]
    assert always["guidance"]["requiresConfirmation"] is True
    assert never["guidance"]["requiresConfirmation"] is False


async def test_lenient_conditions_and_notes_on_type_mismatch(c):
    large = await next_of(c, "nav-conditions", ["start"], {"scope": " LARGE", "risk": "9"})
    worded = await next_of(c, "nav-conditions", ["start"], {"scope": "small", "risk": "high"})
    assert large["step"]["id"] == "large-only"
    assert worded["step"]["id"] == "finish"
    assert worded["skipped"] == ["large-only", "risky"]
    assert any(
        "risk" in note and 'a string ("high")' in note and "not a number" in note
        for note in worded["notes"]
    ), worded.get("notes")


async def test_loops_take_count_and_items_from_the_context(c):
    files = [{"path": "a.py", "lines": 10}, {"path": "b.py", "lines": 20}]
    seen, _ = await walk_stateless(c, "nav-loops", {"passCount": 2, "files": files})
    assert [(s["id"], s["prompt"]) for s in seen] == [
        ("polish", "Polish pass 1 of 2."),
        ("polish", "Polish pass 2 of 2."),
        ("review-file", "Review file 0: a.py (10 lines)."),
        ("review-file", "Review file 1: b.py (20 lines)."),
        ("wrap", "Wrap up."),
    ]
    assert seen[2]["title"] == "Review a.py"


async def test_artifact_loop_stops_when_the_artifact_says(c):
    decisions = {"decide": [[loop_control("continue")], [loop_control("stop")]]}
    seen, _ = await walk_stateless(c, "nav-artifact-loop", {"currentPass": 1}, decisions)
    first = await next_of(c, "nav-artifact-loop", [], {})
    missing = await next_of(c, "nav-artifact-loop", ["improve", "decide"], first["context"])
    assert [s["id"] for s in seen] == ["improve", "decide", "improve", "decide", "publish"]
    assert 'kind "wr.loop_control"' in seen[1]["prompt"]
    # the decision step handed over no artifact: not complete, asked again
    assert missing["step"]["id"] == "decide"
    assert missing["blocked"]["stepId"] == "decide"
    assert "wr.loop_control" in missing["blocked"]["issues"][0]


async def test_delegations_listed_with_inputs_and_tiers(c):
    found = await next_of(c, "nav-delegation", [], {"area": "billing", "owner": "ana"})
    delegations = found["guidance"]["delegations"]
    assert delegations == [
        {
            "workflowId": "routine-nav-check",
            "goal": "Check {{area}}",
            "inputs": {"target": "billing", "depth": "1"},
            "modelTier": "heavy",
        },
        {
            "workflowId": "nav-templates",
            "goal": "Run nav-templates",
            "inputs": {"owner": "ana"},
            "modelTier": "lightweight",
        },
    ]
    prompt = found["step"]["prompt"]
    assert "### 1. routine-nav-check" in prompt and "  - target: billing" in prompt
    assert "- Model tier: heavy" in prompt and "nav-conditions" not in prompt


async def test_assessments_and_output_contracts_are_checked(c):
    low = assessment(tests="LOW")
    first = await next_of(c, "nav-assessment", [], {})
    followup = await next_of(c, "nav-assessment", ["assess"], {}, artifacts=[low])
    bad_level = await c.call_tool(
        "workflow_validate",
        {
            "workflowId": "nav-assessment",
            "stepId": "assess",
            "output": "x",
            "artifacts": [assessment(tests="great")],
        },
    )
    good = await next_of(c, "nav-assessment", ["assess"], {}, artifacts=[assessment(tests="high")])
    bad_verdict = await c.call_tool(
        "workflow_validate",
        {
            "workflowId": "nav-assessment",
            "stepId": "verdict",
            "output": "x",
            "artifacts": [{"kind": "wr.review_verdict", "verdict": "fine"}],
        },
    )
    ok_verdict = await c.call_tool(
        "workflow_validate",
        {
            "workflowId": "nav-assessment",
            "stepId": "verdict",
            "output": "x",
            "artifacts": [verdict()],
        },
    )
    assert [d["id"] for d in first["guidance"]["assessments"][0]["dimensions"]] == ["tests", "docs"]
    assert "- tests (low | medium | high): Test coverage of the change" in first["step"]["prompt"]
    assert followup["step"]["id"] == "assess"
    assert followup["blocked"]["followUps"][0].startswith("Add tests before moving on.")
    assert bad_level.structured_content["valid"] is False
    assert "not one of low, medium, high" in bad_level.structured_content["issues"][0]
    assert good["step"]["id"] == "verdict"
    assert good["guidance"]["outputContract"] == {
        "contractRef": "wr.contracts.review_verdict",
        "required": True,
    }
    assert bad_verdict.structured_content["valid"] is False
    assert any("verdict" in issue for issue in bad_verdict.structured_content["issues"])
    assert ok_verdict.structured_content == {"valid": True, "issues": [], "suggestions": []}


# --- both paths serve the same prompts ------------------------------------------------------

CONTEXTS: dict[str, dict[str, Any]] = {
    "nav-blocks": {"feature": "export"},
    "nav-templates": {"ticket": {"id": "T-7", "title": "Fix"}, "owner": "ana"},
    "nav-fragments": {"rigor": "thorough", "target": "auth", "risk": 9},
    "nav-conditions": {"scope": "large", "risk": "high"},
    "nav-loops": {"passCount": 2, "files": [{"path": "a.py", "lines": 1}]},
    "nav-artifact-loop": {"currentPass": 1},
    "nav-delegation": {"area": "billing", "owner": "ana"},
    "nav-assessment": {},
    "nav-metrics-coding": {"change": "the cache"},
    "nav-metrics-review": {},
}
BUNDLED_CONTEXT = {
    "rootCauseConfirmed": True,
    "testsPassing": True,
    "reviewFiles": ["a.py", "b.py"],
    "validationClean": True,
    "ticketType": "bug",
    "complexity": 0.5,
    "taskComplexity": "large",
    "audience": "engineers",
    "durationMinutes": 30,
    "errorMessage": "timeout",
    "severity": "high",
    "targetBranch": "release/1",
    # what the steps' `sets` ask besides (the bundled workflows' declared context)
    "riskScore": 0.8,
    "touchesSecurity": False,
    "hasMigrations": True,
    "reproducible": True,
    "linesChanged": 900,
    "riskLevel": "high",
    "needsCommands": True,
    "usesContext": True,
}


def loop_control(decision: str) -> dict:
    return {"kind": "wr.loop_control", "decision": decision}


def assessment(**levels: str) -> dict:
    return {"kind": "wr.assessment", "assessmentId": "readiness", "dimensions": levels}


def verdict() -> dict:
    return {
        "kind": "wr.review_verdict",
        "verdict": "clean",
        "confidence": "high",
        "findings": [],
        "summary": "ok",
    }


# What the agent hands over per step id, in the order it visits the step.
HANDED: dict[str, list[list[dict]]] = {
    "decide": [[loop_control("continue")], [loop_control("stop")]],
    "assess": [[assessment(tests="high")]],
    "verdict": [[verdict()]],
}


def _handed(step_id: str, visits: dict[str, int], table: dict | None) -> list[dict] | None:
    table = HANDED if table is None else table
    if step_id not in table:
        return None
    index = visits.get(step_id, 0)
    visits[step_id] = index + 1
    return table[step_id][min(index, len(table[step_id]) - 1)]


def _seen(step: dict, guidance: dict) -> dict:
    return {
        "id": step["id"],
        "title": step.get("title"),
        "prompt": step.get("prompt"),
        "requiresConfirmation": guidance.get("requiresConfirmation"),
    }


async def walk_stateless(
    c: Client, workflow: str, context: dict, table: dict | None = None
) -> tuple[list[dict], list[str]]:
    done: list[str] = []
    ctx, artifacts, visits, seen = dict(context), None, {}, []
    for _ in range(60):
        extra = {"artifacts": artifacts} if artifacts is not None else {}
        found = await next_of(c, workflow, done, ctx, **extra)
        assert "blocked" not in found, found["blocked"]
        if found["isComplete"]:
            return seen, done
        step = found["step"]
        ctx = found["context"]
        if step.get("run"):  # a command step: the engine runs it in a run; not an agent prompt
            done.append(step["id"])
            artifacts = None
            continue
        seen.append(_seen(step, found["guidance"]))
        done.append(step["id"])
        artifacts = _handed(step["id"], visits, table)
        # the agent keeps its outputs where {{steps.ID.output}} reads them, as a run keeps them
        ctx = {**ctx, "steps": {**ctx.get("steps", {}), step["id"]: {"output": "done"}}}
    raise AssertionError(f"{workflow} did not complete in 60 steps: {done}")


async def walk_run(c: Client, workflow: str, context: dict) -> tuple[list[dict], dict]:
    started = await c.call_tool(
        "run_workflow", {"workflow_name": workflow, "context": context, "wait_seconds": 30}
    )
    assert not started.is_error, started.content[0].text
    state, visits, seen = started.structured_content, {}, []
    for _ in range(60):
        if state["status"] != "waiting":
            assert state["status"] == "success", state
            return seen, state
        waiting = state["waiting"]
        seen.append(_seen(waiting["step"], waiting["guidance"]))
        args: dict[str, Any] = {
            "workflow_id": state["workflow_id"],
            "step_key": waiting["step_key"],  # as the guidance asks: the same text each step
            "output": "done",
            "wait_seconds": 30,
            # the variables the prompt asks to set (its `sets`) that the walk's context has (an
            # optional one it lacks, ai-task-implementation's taskScope, is left out)
            "context": {
                k: context[k] for k in names_asked(waiting["step"]["prompt"]) if k in context
            },
        }
        artifacts = _handed(waiting["step"]["id"], visits, None)
        if artifacts is not None:
            args["artifacts"] = artifacts
        answered = await c.call_tool("continue_workflow", args)
        assert not answered.is_error, answered.content[0].text
        state = answered.structured_content
        assert state["outcome"] == "accepted", state
    raise AssertionError(f"{workflow} did not finish in 60 agent steps")


def _walks() -> list[tuple[str, dict]]:
    bundled = [
        (path.stem, BUNDLED_CONTEXT)
        for path in sorted(BUNDLED.glob("*.json"))
        if '"run"' not in path.read_text()  # command steps are executed by a run, not prompted
    ]
    return [*CONTEXTS.items(), *bundled]


async def test_stateless_and_run_serve_the_same_prompts(c):
    """One server for every walk: starting the run store once keeps this test in seconds."""
    walked = []
    for workflow, context in _walks():
        stateless, _ = await walk_stateless(c, workflow, context)
        run, finished = await walk_run(c, workflow, context)
        assert stateless, f"{workflow}: a walk with no agent step proves nothing"
        assert run == stateless, workflow
        assert "s3cret-value" not in json.dumps(run)
        if workflow == "nav-conditions":  # a run explains a type-false condition too
            skipped = {r["step_name"]: r for r in finished["step_results"]}["risky"]
            assert skipped["status"] == "skipped"
            assert 'risk is a string ("high")' in skipped["reason"], skipped
        walked.append(workflow)
    assert len(walked) == len(CONTEXTS) + 7  # every fixture and every bundled agent workflow


# --- a dry run serves the prompts the next step serves -------------------------------------


def _planned_prompts(plan: dict) -> list[tuple[str, str]]:
    return [(s["step_name"], s["prompt"]) for g in plan["groups"] for s in g["steps"]]


async def test_dry_run_plan_shows_the_prompts_workflow_next_serves(c):
    """Prompt blocks, a fragment, a routine template call and parameters: the plan is of the
    compiled workflow, its prompts rendered by the navigator's function with an empty context."""
    for workflow, parameters in (
        ("nav-dry-run", {"ticket": "T-7"}),
        ("nav-metrics-coding", {}),
    ):
        dry = await c.call_tool(
            "run_workflow",
            {"workflow_name": workflow, "parameters": parameters, "dry_run": True},
        )
        assert not dry.is_error, dry.content[0].text
        planned = _planned_prompts(dry.structured_content)
        seen, _ = await walk_stateless(c, workflow, {"parameters": parameters})
        assert planned == [(s["id"], s["prompt"]) for s in seen], workflow
    assert planned[-1][1].startswith("Open the pull request.\n\n**Metrics:**")  # metricsProfile


# --- metricsProfile: what each profile adds to a served prompt -----------------------------

SHAS = (
    "**Metrics:** this workflow records its commits. Whenever you move on after committing, set "
    "`metrics_commit_shas` in the context to the SHAs of every commit made in this session so "
    "far, the earlier ones included: the context is merged key by key, so a list holding only "
    "the new SHAs would replace the earlier ones."
)
OUTCOME = (
    '- `metrics_outcome`: exactly one of "success", "partial", "abandoned" or "error" (classify '
    "how the work ended; no other value counts)"
)


async def test_metrics_profile_coding_asks_for_shas_everywhere_and_totals_last(c):
    first = await next_of(c, "nav-metrics-coding", [], {"change": "the cache"})
    assert first["step"]["prompt"] == f"Implement the cache.\n\n{SHAS}"
    last = await next_of(c, "nav-metrics-coding", ["implement"], first["context"])
    assert last["step"]["prompt"] == "\n".join(
        [
            f"Open the pull request.\n\n{SHAS}\n\n**Metrics, last step:** when you finish, also "
            "set in the context:",
            OUTCOME,
            "- `metrics_pr_numbers`: the pull request numbers opened or updated, as a list of "
            "integers (not URLs)",
            "- `metrics_files_changed`, `metrics_lines_added`, `metrics_lines_removed`: integers",
        ]
    )
    # upstream sends the workflow's references beside the response, never inside a prompt
    assert "Style guide" not in first["step"]["prompt"] + last["step"]["prompt"]


async def test_metrics_profile_review_asks_on_the_last_work_step_of_a_final_loop(c):
    seen, _ = await walk_stateless(c, "nav-metrics-review", {})
    final = "\n".join(
        [
            "Comment on the diff.\n\n**Metrics, last step:** when you finish, also set in the "
            "context:",
            "- `metrics_pr_numbers`: the pull request numbers reviewed, as a list of integers "
            "(not URLs)",
            OUTCOME,
        ]
    )
    assert [s["id"] for s in seen] == ["read", "comment", "decide", "comment", "decide"]
    assert seen[0]["prompt"] == "Read the diff."  # review asks on the last step only
    assert seen[1]["prompt"] == seen[3]["prompt"] == final
    # the loop's control step decides the loop; it is not asked for metrics
    assert all("Metrics" not in s["prompt"] for s in seen if s["id"] == "decide")
