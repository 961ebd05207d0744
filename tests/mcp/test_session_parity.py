"""Sessions on upstream WorkRail 3.x's rails, through the real server process over
stdio, in both tool editions: which steps ask for notes and say so, what a later step reads of an
earlier one's answer, what a re-read shows, how workflows are found by tag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_hostile_files_cli import workrail
from tests.context_answers import a_value_it_allows
from tests.mcp.conftest import write_workflow
from tests.mcp.upstream_agent import ANSWER_BOOK, GENERIC_NOTES
from workrail_engine.answers.blockers import MAX_FILL_CHARS
from workrail_engine.evaluation.contracts import ASSESSMENT_KIND, CONTRACTS
from workrail_engine.sessions.service import (
    NOTES_REQUIRED,
    RECOVERY_CHARS,
    RECOVERY_NOTE_CHARS,
    RECOVERY_STEPS,
)

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

ROOT = Path(__file__).resolve().parents[2]
NAV = ROOT / "tests" / "fixtures" / "upstream_nav"
# Walked step by step: upstream fixtures with output contracts in and out of loops, assessments,
# fragments and a metrics profile; our bundled workflow whose steps have validation criteria.
WALKED_NAV = ["nav-artifact-loop", "nav-assessment", "nav-fragments", "nav-metrics-review"]
WALKED_BUNDLED = ["ai-task-implementation"]

EDITIONS = [pytest.param((), id="default"), pytest.param(("--tools", "upstream"), id="upstream")]
# module scope: pytest runs each edition's tests together, so the kept server of an edition
# starts once (a kept server is replaced when a test asks for other options)
each_edition = pytest.mark.parametrize("edition", EDITIONS, scope="module")
LOOP_STOP = {"kind": "wr.loop_control", "decision": "stop"}

CONTRACT_FLOW = {
    "id": "contract-flow",
    "name": "Contract flow",
    "description": "A contract step between two prompt steps",
    "version": "1.0.0",
    "steps": [
        {"id": "understand", "title": "Understand", "prompt": "Read the task for {{goal}}"},
        {
            "id": "decide",
            "title": "Decide",
            "prompt": "Decide whether to go on",
            "outputContract": {"contractRef": "wr.contracts.loop_control"},
        },
        {
            "id": "build",
            "title": "Build",
            "prompt": "Based on {{steps.understand.output}}, build; "
            "the decision was {{steps.decide.output.decision}}.",
        },
        {"id": "wrap", "title": "Wrap up", "prompt": "Tidy up", "notesOptional": True},
    ],
}

LONG_FLOW = {
    "id": "long-flow",
    "name": "Long flow",
    "description": "Seven plain steps",
    "version": "1.0.0",
    "steps": [
        {"id": f"part-{n}", "title": f"Step {n}", "prompt": f"Do part {n}"} for n in range(1, 8)
    ],
}

PLAIN = {"id": "only", "title": "Only", "prompt": "Do it"}

# a declared context: the first step asks for both variables, with their allowed values;
# taskSize must be set, needsReview may be left out (its default)
SIZED_FLOW = {
    "id": "sized-flow",
    "name": "Sized flow",
    "context": {
        "taskSize": {"type": "string", "enum": ["small", "large"], "description": "How big"},
        "needsReview": {"type": "boolean", "default": False},
    },
    "steps": [
        {
            "id": "size",
            "title": "Size",
            "prompt": "Size the task.",
            "sets": ["taskSize", "needsReview"],
        },
        {"id": "work", "title": "Work", "prompt": "Do the work.", "reads": ["taskSize"]},
    ],
}
SIZED_REQUEST = (
    "Set these context variables when you answer this step:\n"
    '- taskSize (How big): one of "small", "large"\n'
    "- needsReview: true or false (false if you leave it out)"
)
TASK_SIZE_SCHEMA = SIZED_FLOW["context"]["taskSize"]  # type: ignore[index]
# a declared enum far longer than a blocked answer repeats (`MAX_FILL_CHARS`)
WIDE_ENUM = [f"region-{n:05d}-of-the-world" for n in range(3000)]
WIDE_FLOW = {
    "id": "wide-flow",
    "name": "Wide flow",
    "context": {"region": {"type": "string", "enum": WIDE_ENUM}},
    "steps": [{"id": "pick", "title": "Pick", "prompt": "Pick a region.", "sets": ["region"]}],
}

# Each reference with what a start in the test's workspace finds (the package folder of the
# project's workflows is the project).
REFERENCED = {
    "guide": ("docs/guide.md", "workspace", "resolved"),
    "missing": ("docs/missing.md", "workspace", "unresolved"),
    "above": ("../outside.md", "workspace", "unresolved"),
    "rubric": ("spec/rubric.md", "package", "resolved"),
}
REFERENCED_FLOW = {
    **LONG_FLOW,
    "id": "referenced-flow",
    "references": [
        {
            "id": ref_id,
            "title": f"The {ref_id}",
            "source": source,
            "purpose": "Read before you start",
            "authoritative": ref_id == "guide",
            **({"resolveFrom": "package"} if base == "package" else {}),
        }
        for ref_id, (source, base, _) in REFERENCED.items()
    ],
}


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kept servers' project (`shared_servers`): the bundled workflows and ours."""
    root = tmp_path_factory.mktemp("parity") / "project"
    write_workflow(root / "workflows", CONTRACT_FLOW)
    write_workflow(root / "workflows", LONG_FLOW)
    write_workflow(root / "workflows", REFERENCED_FLOW)
    write_workflow(root / "workflows", SIZED_FLOW)
    write_workflow(root / "workflows", WIDE_FLOW)
    (root / "spec").mkdir()
    (root / "spec" / "rubric.md").write_text("# rubric")
    for name in WALKED_NAV:
        write_workflow(root / "workflows", definition_of(name))
    for workflow_id in ("acme.deploy", "acme.rollback", "wr.coding-task"):  # tagged by their ids
        write_workflow(root / "workflows", {**LONG_FLOW, "id": workflow_id, "steps": [PLAIN]})
    made = workrail(root, "init", "scaffolded-flow")  # reads {{steps.understand.output}}
    assert made.returncode == 0, made.stderr
    return root


def definition_of(workflow: str) -> dict[str, Any]:
    for path in (NAV / f"{workflow}.json", ROOT / "workflows" / f"{workflow}.json"):
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
    assert workflow == CONTRACT_FLOW["id"], workflow
    return CONTRACT_FLOW


def find(steps: list[dict[str, Any]], step_id: str) -> dict[str, Any]:
    for step in steps:
        if step.get("id") == step_id:
            return step
        inner = [s for key in ("steps", "body") for s in step.get(key) or []]
        if inner and (found := find(inner, step_id)):
            return found
    return {}


def artifacts_for(definition: dict[str, Any], step: dict[str, Any]) -> list[dict[str, Any]]:
    """What a careful agent hands over with ``step``: its contract's artifact and, for each
    assessment, the highest level of every dimension (no follow-up fires)."""
    out = []
    contract = step.get("outputContract")
    if contract:
        out.append(CONTRACTS[contract["contractRef"]].example)
    assessments = {a["id"]: a for a in definition.get("assessments") or []}
    for ref in step.get("assessmentRefs") or []:
        dimensions = {d["id"]: d["levels"][-1] for d in assessments[ref]["dimensions"]}
        out.append({"kind": ASSESSMENT_KIND, "assessmentId": ref, "dimensions": dimensions})
    return out


async def call(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    body = json.loads(result.content[0].text)
    assert not result.is_error, body
    return body


async def start(client: Any, workflow: str, workspace: Path) -> dict[str, Any]:
    return await call(
        client,
        "start_workflow",
        {"workflowId": workflow, "workspacePath": str(workspace), "goal": "ship the cache"},
    )


async def answer(client: Any, token: str, **output: Any) -> dict[str, Any]:
    return await call(client, "continue_workflow", {"continueToken": token, "output": output})


def codes(body: dict[str, Any]) -> list[str]:
    return [b["code"] for b in body.get("blockers", {}).get("blockers", [])]


@each_edition
async def test_a_contract_step_answered_by_its_artifact_alone_advances(
    shared_servers, tmp_path, edition
):
    """Upstream asks no notes of a step with an output contract: its artifact is the evidence.
    Without the artifact it is still blocked, for the artifact and not for notes."""
    async with shared_servers.connected(*edition) as (client, _):
        started = await start(client, "contract-flow", tmp_path)
        decide = await answer(client, started["continueToken"], notesMarkdown="read it")
        assert decide["pending"]["stepId"] == "decide"
        empty = await answer(client, decide["continueToken"], artifacts=[])
        moved = await answer(client, decide["continueToken"], artifacts=[LOOP_STOP])
    assert empty["kind"] == "blocked" and codes(empty) == ["MISSING_REQUIRED_OUTPUT"]
    assert moved["kind"] == "ok" and moved["pending"]["stepId"] == "build"


@each_edition
async def test_the_prompt_says_notes_are_required_on_exactly_the_steps_that_block_without(
    shared_servers, tmp_path, edition
):
    """Each step of each walked workflow is first answered with everything but notes: it is
    sent back for notes exactly when its prompt carried the notes-required block."""
    said, blocked, walked = set(), set(), []
    async with shared_servers.connected(*edition) as (client, _):
        for workflow in [CONTRACT_FLOW["id"], *WALKED_NAV, *WALKED_BUNDLED]:
            definition = definition_of(workflow)
            now = await start(client, workflow, tmp_path)
            while not now["isComplete"]:
                step_id = now["pending"]["stepId"]
                walked.append((workflow, step_id))
                if NOTES_REQUIRED in now["pending"]["prompt"]:
                    said.add((workflow, step_id))
                handed = artifacts_for(definition, find(definition["steps"], step_id))
                probe = await answer(client, now["continueToken"], artifacts=handed)
                if "MISSING_REQUIRED_NOTES" in codes(probe):
                    blocked.add((workflow, step_id))
                if probe["kind"] == "blocked":
                    notes = ANSWER_BOOK.get(step_id, GENERIC_NOTES)
                    probe = await answer(
                        client, now["continueToken"], notesMarkdown=notes, artifacts=handed
                    )
                    assert probe["kind"] == "ok", probe
                now = probe
    assert said == blocked
    assert said and set(walked) - said  # both kinds of step were met
    assert ("contract-flow", "decide") not in said and ("nav-assessment", "verdict") not in said


@each_edition
async def test_a_later_step_reads_an_earlier_steps_notes_and_artifact_fields(
    shared_servers, tmp_path, edition
):
    """``{{steps.ID.output}}`` is the step's notes, ``{{steps.ID.output.FIELD}}`` a field of
    the artifact it handed over — in `workrail init`'s own scaffold and in a contract step."""
    async with shared_servers.connected(*edition) as (client, _):
        scaffold = await start(client, "scaffolded-flow", tmp_path)
        plan = await answer(
            client, scaffold["continueToken"], notesMarkdown="export lacks a --since flag"
        )
        started = await start(client, "contract-flow", tmp_path)
        decide = await answer(client, started["continueToken"], notesMarkdown="read the task")
        build = await answer(client, decide["continueToken"], artifacts=[LOOP_STOP])
    assert plan["pending"]["stepId"] == "plan"
    assert "Based on export lacks a --since flag, list" in plan["pending"]["prompt"]
    assert "Based on read the task, build; the decision was stop." in build["pending"]["prompt"]
    assert "[unset:" not in plan["pending"]["prompt"] + build["pending"]["prompt"]


@each_edition
async def test_a_reread_by_continue_token_shows_the_earlier_notes_newest_kept(
    shared_servers, tmp_path, edition
):
    """A token-only continue_workflow (a new chat picking the session up) re-shows the pending
    step with the earlier steps' notes in order; past the section's size the oldest go first."""
    answered = 6
    assert answered <= RECOVERY_STEPS and answered * RECOVERY_NOTE_CHARS > RECOVERY_CHARS
    async with shared_servers.connected(*edition) as (client, _):
        now = await start(client, "long-flow", tmp_path)
        for n in range(1, answered + 1):
            notes = f"notes of step {n}: " + "x" * RECOVERY_NOTE_CHARS
            now = await answer(client, now["continueToken"], notesMarkdown=notes)
        reread = await call(client, "continue_workflow", {"continueToken": now["continueToken"]})
    prompt = reread["pending"]["prompt"]
    assert reread["pending"]["stepId"] == "part-7" and prompt.startswith("Step: Step 7 (part-7)")
    section = prompt[prompt.index("## Recovery") :]
    assert len(section) <= RECOVERY_CHARS
    shown = [n for n in range(1, answered + 1) if f"notes of step {n}:" in section]
    assert shown == list(range(answered - len(shown) + 1, answered + 1)) and len(shown) >= 3
    assert section.index("notes of step 5:") < section.index("notes of step 6:")
    assert f"({answered - len(shown)} earlier steps left out)" in section


async def test_workflows_are_found_by_their_tags_upstreams_functional_tags_and_namespace(
    shared_servers, tmp_path
):
    """``list_workflows {tags}`` (the upstream edition's): our bundled workflows by the functional
    tag in their own tags, upstream's bundled ids by upstream's tags, ``acme.*`` by ``acme``."""
    ws = str(tmp_path)
    async with shared_servers.connected("--tools", "upstream") as (client, _):
        coding = await call(client, "list_workflows", {"workspacePath": ws, "tags": ["coding"]})
        acme = await call(client, "list_workflows", {"workspacePath": ws, "tags": ["acme"]})
        listed = await call(client, "list_workflows", {"workspacePath": ws})
    found = {w["workflowId"] for w in coding["workflows"]}
    assert {"coding-task", "ai-task-implementation", "wr.coding-task"} <= found
    assert "mr-review" not in found and "acme.deploy" not in found
    assert [w["workflowId"] for w in acme["workflows"]] == ["acme.deploy", "acme.rollback"]
    summary = {entry["id"]: entry for entry in listed["tagSummary"]}
    assert summary["coding"]["count"] == len(found) and summary["acme"]["count"] == 2
    assert summary["acme"]["examples"] == ["acme.deploy", "acme.rollback"]
    assert "wr" not in summary  # upstream's own ids carry its tags, not a namespace's
    assert listed["tagSummary"][0]["id"] == "coding"  # upstream's functional tags come first


async def test_workflow_next_serves_the_first_step_without_completed_steps(shared_servers):
    async with shared_servers.connected() as (client, _):
        first = await call(client, "workflow_next", {"workflowId": "contract-flow"})
        same = await call(
            client, "workflow_next", {"workflowId": "contract-flow", "completedSteps": []}
        )
    assert first["step"]["id"] == "understand" and first == same


@each_edition
async def test_a_step_with_sets_asks_for_its_variables_with_their_values(
    shared_servers, tmp_path, edition
):
    async with shared_servers.connected(*edition) as (client, _):
        started = await start(client, "sized-flow", tmp_path)
        later = await call(
            client,
            "continue_workflow",
            {
                "continueToken": started["continueToken"],
                "output": {"notesMarkdown": "Sized it: small, no review."},
                "context": {"taskSize": "small"},  # needsReview left out: it has a default
            },
        )
    assert "Size the task.\n\n" + SIZED_REQUEST + "\n" in started["pending"]["prompt"]
    assert later["pending"]["stepId"] == "work"
    assert "Set these context variables" not in later["pending"]["prompt"]


def filled(call_: dict[str, Any]) -> dict[str, Any]:
    """The scripted agent's retry: the blocker's retryCall, each param of ``fill`` given a value
    its schema allows — the enum's first, else one of its type (the agent picks; the engine
    cannot)."""
    params = json.loads(json.dumps(call_["params"]))
    for path, schema in call_["fill"].items():
        *parents, leaf = path.split(".")
        target = params
        for part in parents:
            target = target[part]
        assert str(target[leaf]).startswith("<"), target  # a placeholder, not a value
        target[leaf] = a_value_it_allows(schema)
    return params


SIZED_NOTES = {"notesMarkdown": "Sized the task."}


async def sized_answer(
    client: Any, tmp_path: Path, context: dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """A sized-flow session started and its first step answered with ``context`` (None: none):
    the continue token and the answer."""
    started = await start(client, "sized-flow", tmp_path)
    token = started["continueToken"]
    answer = {"continueToken": token, "output": SIZED_NOTES}
    if context is not None:
        answer["context"] = context
    return token, await call(client, "continue_workflow", answer)


@each_edition
async def test_a_context_value_its_declaration_refuses_is_blocked_with_the_allowed_values(
    shared_servers, tmp_path, edition
):
    notes = SIZED_NOTES
    async with shared_servers.connected(*edition) as (client, _):
        wrong = {"taskSize": "huge", "needsReview": "yes", "owner": "ana"}
        token, blocked = await sized_answer(client, tmp_path, wrong)
        retry_calls = [b["retryCall"] for b in blocked["blockers"]["blockers"]]
        retried = await call(client, "continue_workflow", filled(retry_calls[0]))
    assert blocked["kind"] == "blocked"
    found = {(b["code"], b["message"], b["suggestedFix"]) for b in blocked["blockers"]["blockers"]}
    assert found == {
        (
            "INVALID_REQUIRED_OUTPUT",
            'context.taskSize is "huge", which its declaration refuses: "huge" is not one of '
            '"small" or "large"',
            'Send context.taskSize as one of "small", "large".',
        ),
        (
            "INVALID_REQUIRED_OUTPUT",
            'context.needsReview is "yes", which its declaration refuses: "yes" is not of type '
            '"boolean"',
            "Send context.needsReview as a JSON boolean.",
        ),
    }
    # The retry holds what the engine knows: the token, the notes, the values that passed, and
    # a placeholder for each refused one, with the schema its value must meet.
    assert (
        retry_calls[0]
        == retry_calls[1]
        == {
            "tool": "continue_workflow",
            "params": {
                "continueToken": token,
                "output": notes,
                "context": {
                    "taskSize": '<one of "small", "large">',
                    "needsReview": "<a JSON boolean>",
                    "owner": "ana",
                },
            },
            "fill": {
                "context.taskSize": TASK_SIZE_SCHEMA,
                "context.needsReview": {"type": "boolean", "default": False},
            },
        }
    )
    assert retried["kind"] == "ok" and retried["pending"]["stepId"] == "work"


@each_edition
async def test_an_answer_leaving_out_a_variable_of_sets_is_blocked_with_the_call_to_complete(
    shared_servers, tmp_path, edition
):
    notes = SIZED_NOTES
    async with shared_servers.connected(*edition) as (client, _):
        token, blocked = await sized_answer(client, tmp_path, None)
        (blocker,) = blocked["blockers"]["blockers"]  # needsReview may be left out
        retried = await call(client, "continue_workflow", filled(blocker["retryCall"]))
    assert blocked["kind"] == "blocked" and blocked["retryContinueToken"] == token
    assert {k: blocker[k] for k in ("code", "pointer", "message", "suggestedFix")} == {
        "code": "MISSING_REQUIRED_OUTPUT",
        "pointer": {"kind": "workflow_step", "stepId": "size"},
        "message": "context.taskSize is not set: step 'size' asks the answer to set it",
        "suggestedFix": 'Send context.taskSize as one of "small", "large".',
    }
    assert blocker["retryCall"] == {
        "tool": "continue_workflow",
        "params": {
            "continueToken": token,
            "output": notes,
            "context": {"taskSize": '<one of "small", "large">'},
        },
        "fill": {"context.taskSize": TASK_SIZE_SCHEMA},
    }
    assert retried["kind"] == "ok" and retried["pending"]["stepId"] == "work"


async def test_a_huge_declared_enum_is_not_repeated_whole_in_each_retry(shared_servers, tmp_path):
    async with shared_servers.connected() as (client, _):
        started = await start(client, "wide-flow", tmp_path)
        blocked = await call(
            client,
            "continue_workflow",
            {"continueToken": started["continueToken"], "output": SIZED_NOTES},
        )
    (blocker,) = blocked["blockers"]["blockers"]
    call_ = blocker["retryCall"]
    placeholder = call_["params"]["context"]["region"]
    assert len(placeholder) == MAX_FILL_CHARS and placeholder.endswith("…>")
    assert placeholder.startswith(f'<one of "{WIDE_ENUM[0]}", "{WIDE_ENUM[1]}"')
    assert call_["fill"]["context.region"] == {
        "type": "string",
        "$comment": "see the declaration of region in the workflow's context "
        f"({len(json.dumps(WIDE_FLOW['context']['region'])):,} characters as JSON)",
    }
    assert len(json.dumps(blocked["blockers"])) < 3 * MAX_FILL_CHARS  # the prompt lists them all


async def test_a_runs_answer_with_a_refused_or_missing_context_value_is_blocked_with_the_fix(
    shared_servers,
):
    async with shared_servers.connected() as (client, _):
        started = await call(client, "run_workflow", {"workflow_name": "sized-flow"})
        answer_to = {"workflow_id": started["workflow_id"], "output": "Sized the task."}
        answer_to["step_key"] = started["waiting"]["step_key"]
        assert SIZED_REQUEST in started["waiting"]["step"]["prompt"]
        refused = await call(
            client, "continue_workflow", {**answer_to, "context": {"taskSize": "Huge"}}
        )
        missing = await call(client, "continue_workflow", answer_to)
        (blocker,) = missing["blockers"]["blockers"]
        accepted = await call(client, "continue_workflow", filled(blocker["retryCall"]))
    assert refused["outcome"] == "blocked" and refused["status"] == "waiting"
    (wrong,) = refused["blockers"]["blockers"]
    assert wrong["code"] == "INVALID_REQUIRED_OUTPUT"
    assert wrong["suggestedFix"] == 'Send context.taskSize as one of "small", "large".'
    assert (
        wrong["retryCall"]
        == blocker["retryCall"]
        == {
            "tool": "continue_workflow",
            "params": {**answer_to, "context": {"taskSize": '<one of "small", "large">'}},
            "fill": {"context.taskSize": TASK_SIZE_SCHEMA},
        }
    )
    assert blocker["code"] == "MISSING_REQUIRED_OUTPUT"
    assert accepted["outcome"] == "accepted" and accepted["waiting"]["step"]["id"] == "work"
    # needsReview, left out, took its declared default
    assert accepted["waiting"]["context"] == {"taskSize": "small", "needsReview": False}


async def test_workflow_next_asks_for_the_variables_of_sets(shared_servers):
    async with shared_servers.connected() as (client, _):
        served = await call(client, "workflow_next", {"workflowId": "sized-flow"})
    assert served["step"]["prompt"] == "Size the task.\n\n" + SIZED_REQUEST
    assert served["context"]["needsReview"] is False  # its declared default, from the start


def edition_of(edition: tuple[str, ...]) -> str:
    return "upstream" if edition else "default"


@each_edition
async def test_an_output_without_notes_or_artifacts_rereads_unless_the_intent_is_advance(
    shared_servers, tmp_path, edition
):
    """``output: {}`` answers nothing: upstream reads it as a re-read (its rehydrate), and an
    explicit ``intent: advance`` with it is an answer without notes (blocked)."""
    async with shared_servers.connected(*edition) as (client, _):
        started = await start(client, "long-flow", tmp_path)
        token = started["continueToken"]
        reread = await call(client, "continue_workflow", {"continueToken": token, "output": {}})
        advance = {"continueToken": token, "output": {}, "intent": "advance"}
        blocked = await call(client, "continue_workflow", advance)
    assert reread["kind"] == "ok" and reread["pending"]["stepId"] == "part-1"
    assert reread.get("nextIntent" if edition else "outcome") == (
        "rehydrate_only" if edition else "current"
    )
    assert blocked["kind"] == "blocked" and codes(blocked) == ["MISSING_REQUIRED_NOTES"]


@each_edition
async def test_empty_notes_are_invalid_upstream_and_no_notes_here(
    shared_servers, tmp_path, edition
):
    """``notesMarkdown: ""``: upstream's schema refuses it (VALIDATION_ERROR naming the path);
    the default edition reads it as no notes — blocked, retried with the same token."""
    async with shared_servers.connected(*edition) as (client, _):
        started = await start(client, "long-flow", tmp_path)
        arguments = {"continueToken": started["continueToken"], "output": {"notesMarkdown": ""}}
        result = await client.call_tool("continue_workflow", arguments)
    body = json.loads(result.content[0].text)
    if edition_of(edition) == "upstream":
        assert result.is_error and body["code"] == "VALIDATION_ERROR"
        assert body["details"]["validationErrors"][0]["path"] == "output.notesMarkdown"
    else:
        assert not result.is_error and codes(body) == ["MISSING_REQUIRED_NOTES"]
        assert body["retryContinueToken"] == started["continueToken"]


@each_edition
async def test_a_finished_session_answers_tokens_only_in_the_default_edition(
    shared_servers, tmp_path, edition
):
    """Upstream's last answer has no continue or checkpoint token (nothing to continue); the
    default edition keeps them: they re-read the finished session and make its checkpoint."""
    async with shared_servers.connected(*edition) as (client, _):
        now = await start(client, "contract-flow", tmp_path)
        answers = [
            {"notesMarkdown": "read"},
            {"artifacts": [LOOP_STOP]},
            {"notesMarkdown": "built"},
        ]
        for output in [*answers, {"notesMarkdown": "tidied"}]:
            token = now["continueToken"]
            now = await answer(client, token, **output)
        replayed = await answer(client, token, notesMarkdown="tidied")
        if "checkpointToken" in now:
            ck = {"checkpointToken": now["checkpointToken"]}
            checkpoint = await call(client, "checkpoint_workflow", ck)
            assert checkpoint["checkpointNodeId"] == f"{now['runId']}:5"  # docs/compatibility.md
    assert now["isComplete"] and now["nextIntent"] == "complete" and now["nextCall"] is None
    kept = edition_of(edition) == "default"
    for finished in (now, replayed):
        assert ("continueToken" in finished) is kept and ("checkpointToken" in finished) is kept


@each_edition
async def test_a_start_and_a_reread_list_the_references_as_looked_up_at_the_start(
    shared_servers, tmp_path, edition
):
    """Upstream's start and re-read answers end with the workflow's references, each with where
    it is looked up and whether it was found; the start's look-up is kept with the session (a
    re-read does not look again), and an advance answers none. inspect_workflow lists them as
    declared."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# guide")
    (tmp_path.parent / "outside.md").write_text("beside the workspace")
    ws = str(tmp_path)
    async with shared_servers.connected(*edition) as (client, _):
        inspected = await call(
            client, "inspect_workflow", {"workflowId": "referenced-flow", "workspacePath": ws}
        )
        started = await start(client, "referenced-flow", tmp_path)
        (tmp_path / "docs" / "guide.md").unlink()
        token = started["continueToken"]
        reread = await call(client, "continue_workflow", {"continueToken": token})
        moved = await answer(client, token, notesMarkdown="read the guide")
    references = started["references"]
    assert list(started)[-1] == "references" and reread["references"] == references
    assert [r["id"] for r in references] == list(REFERENCED)
    for found in references:
        source, base, status = REFERENCED[found["id"]]
        assert (found["source"], found["resolveFrom"], found["status"]) == (source, base, status)
    assert references[0]["resolvedPath"] == str(tmp_path / "docs" / "guide.md")
    assert references[3]["resolvedPath"].endswith("/project/spec/rubric.md")
    assert references[0]["authoritative"] is True and "resolvedPath" not in references[2]
    assert "references" not in moved
    assert inspected["references"] == REFERENCED_FLOW["references"]  # as declared


@each_edition
async def test_an_advance_past_an_assessment_step_answers_the_ratings_recorded(
    shared_servers, tmp_path, edition
):
    """After an assessment step, ``stepContext.assessments`` says what was recorded: each rated
    dimension at its defined level (with the rationale given), and a note for each rating read
    ignoring case and space. A follow-up that fired records nothing; a replay answers the same;
    the next advance has no stepContext."""
    rated = {"tests": " HIGH ", "docs": {"level": "present", "rationale": "  the README  "}}
    assessment = {"kind": ASSESSMENT_KIND, "dimensions": rated}
    async with shared_servers.connected(*edition) as (client, _):
        started = await start(client, "nav-assessment", tmp_path)
        token = started["continueToken"]
        low = {"kind": ASSESSMENT_KIND, "dimensions": {"tests": "low"}}
        followup = await answer(client, token, notesMarkdown="rated", artifacts=[low])
        moved = await answer(client, token, notesMarkdown="rated", artifacts=[assessment])
        replayed = await answer(client, token, notesMarkdown="rated", artifacts=[assessment])
        verdict = CONTRACTS["wr.contracts.review_verdict"].example
        after = await answer(client, moved["continueToken"], artifacts=[verdict])
    assert followup["kind"] == "blocked" and "stepContext" not in followup
    assert moved["kind"] == "ok" and list(moved)[-1] == "stepContext"
    [recorded] = moved["stepContext"]["assessments"]
    assert recorded["assessmentId"] == "readiness"
    assert recorded["dimensions"] == [
        {"dimensionId": "tests", "level": "high"},
        {"dimensionId": "docs", "level": "present", "rationale": "the README"},
    ]
    [note] = recorded["normalizationNotes"]
    assert "'tests'" in note and "'high'" in note
    assert replayed["stepContext"] == moved["stepContext"]
    assert after["kind"] == "ok" and "stepContext" not in after
