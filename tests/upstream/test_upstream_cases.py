"""Upstream WorkRail v3.121.0's own test cases, run through our public surfaces.

The cases are data (tests/upstream/cases.py: inputs, expected outcome, upstream file and test
name). Every case runs against one real ``workrail-mcp`` process over stdio, driven by the MCP
SDK's client (``workflow_next``, ``workflow_validate``, ``workflow_lint``); the lint cases also
run through one ``workrail validate --format json`` over all their files. Everything runs once,
in the module's fixture, and each case is then a test of what was observed.

What we ported: conditions (``condition-evaluator``, ``condition-in-operator``), render-time
templates and prompt fragments (``context-template-resolver``, ``prompt-fragments-renderer``), output validation (``validation-engine``), artifacts
(``loop-control-artifact``, ``loop-control-evaluator``, ``artifact-contract-validation``,
``artifact-contract-review-verdict``, ``mcp/assessment-validation``,
``mcp/assessment-consequences``), prompt fragments' checks (``prompt-fragments-validation``), artifact-driven loops and
the loop banner (``v2-advance-loop-control``, ``workflow-interpreter-loop-artifacts``,
``v2/prompt-renderer``, ``contract/mcp-workflow-next``,
``workflow-interpreter-foreach-missing-context``, ``workflow-interpreter-run-condition-trace``), prompt blocks (``prompt-blocks``), routine templates (``template-registry``, ``resolve-templates``) and
which files are valid (``validate-workflow-json``, ``mcp-server-workflow-validate-json``,
``loop-validation``,
``assessment-definition-validation``,
``parallel-step-validation``, ``workflow-reference-validation``).

What we skipped, and why — upstream internals no surface of ours shows:
- session storage, tokens, event logs, projections, snapshots, golden hashes, export bundles
  (``tests/unit/v2/*`` other than the files above): upstream's durable session store; our runs
  and sessions are a different store with their own tests (tests/engine/runs, tests/mcp);
- dependency injection, feature flags, containers, tool-edition selection, transports
  (``config/``, ``integration/feature-flags-*``, ``unit/mcp/transports``): their server's wiring;
- the console, the daemon and its runner, triggers, worktrees, coordinators
  (``workflow-runner-*``, ``agent-loop``, ``trigger-*``, ``coordinators/``, ``lifecycle/``):
  upstream's autonomous runner, which we do not have;
- Git, remote and plugin workflow sources, storage layers and caching
  (``external-workflow-*``, ``remote-workflow-storage``, ``*-workflow-storage*``);
- architecture and snapshot tests of their own code and tool schemas (``architecture/``,
  ``v2-tool-schema-snapshot``, ``schema-locks``), performance tests (``performance/``);
- message-text tests (a sentence upstream prints, e.g. its default rule messages and
  suggestions): we assert the fact the sentence carries (which rule failed, which names it
  cites), never upstream's wording;
- within ported files, expectations on internal values (traces, parsed objects, cache hits,
  normalization records) — the observable outcome (served step, valid or not) is ported;
  ``undefined`` inputs (JSON has none) are ported as an unset variable where that is what they
  mean, else skipped; the unknown-template cases are covered by tests/engine/compile/test_compile.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.mcp.conftest import server_env
from tests.upstream.cases import CASES, lint_file_name, lint_text, of_kind

pytestmark = pytest.mark.slow

WORKRAIL = Path(sys.executable).with_name("workrail")


# --- the workflows each case needs --------------------------------------------------------------


def served_id(c: dict[str, Any]) -> str:
    return f"up-{c['kind']}-{CASES.index(c)}"


def served_workflow(c: dict[str, Any]) -> dict[str, Any]:
    """The workflow a condition, template, output, artifact or walk case is served from."""
    kind = c["kind"]
    head = {"id": served_id(c), "name": c["test"][:80], "version": "1.0.0"}
    probe: dict[str, Any] = {"id": "probe", "title": "Probe", "prompt": "Probe."}
    if kind == "condition":
        probe["runCondition"] = c["condition"]
        return {**head, "steps": [probe, {"id": "after", "title": "After", "prompt": "After."}]}
    if kind == "template":
        fragments = {"promptFragments": c["fragments"]} if "fragments" in c else {}
        return {**head, "steps": [{**probe, "prompt": c["prompt"], **fragments}]}
    if kind == "output":
        return {**head, "steps": [{**probe, "validationCriteria": c["criteria"]}]}
    if kind == "artifact":
        return {**head, **c.get("workflow", {}), "steps": [{**probe, **c["step"]}]}
    return {**head, **c["workflow"]}


def catalog_others(lint_cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The other workflows lint cases name (delegation targets), for the catalog."""
    return {
        other["id"]: other
        for c in lint_cases
        if not c.get("files_together")
        for other in c.get("others", [])
    }


def build_project(root: Path) -> None:
    workflows = root / "workflows"
    workflows.mkdir(parents=True)
    for c in CASES:
        if c["kind"] == "lint":
            continue
        definition = served_workflow(c)
        (workflows / f"{definition['id']}.json").write_text(json.dumps(definition, indent=2))
        for routine in c.get("routines", []):
            (workflows / f"{routine['id']}.json").write_text(json.dumps(routine, indent=2))
    for wid, other in catalog_others(of_kind("lint")).items():
        (workflows / f"{wid}.json").write_text(json.dumps(other, indent=2))


# --- running every case: one server, one CLI run ------------------------------------------------


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    if result.is_error:
        return {"error": json.loads(result.content[0].text)["error"]}
    return {"result": result.structured_content}


async def run_case(client: Client, c: dict[str, Any]) -> Any:
    kind, wid = c["kind"], served_id(c)
    if kind in ("condition", "template"):
        args = {"workflowId": wid, "completedSteps": [], "context": c["context"]}
        return await call(client, "workflow_next", args)
    if kind in ("output", "artifact"):
        args = {"workflowId": wid, "stepId": "probe", "output": c.get("output", "done")}
        if c.get("context"):
            args["context"] = c["context"]
        if kind == "artifact":
            args["artifacts"] = c["artifacts"]
        return await call(client, "workflow_validate", args)
    if kind == "walk":
        return await run_walk(client, c, wid)
    if c["text"] is None:
        return await call(client, "workflow_lint", {"definition": json.loads(lint_text(c))})
    return await call(client, "workflow_lint", {"text": c["text"]})


async def run_walk(client: Client, c: dict[str, Any], wid: str) -> list[dict[str, Any]]:
    """Act as the agent: log each served step and carry the returned context forward."""
    completed: list[str] = []
    context: dict[str, Any] = {}
    seen = []
    for step in c["calls"]:
        context = {**context, **step.get("context_add", {})}  # what the agent learnt meanwhile
        # "completed": an agent's log that names a step the workflow did not serve
        log = step.get("completed", completed)
        args: dict[str, Any] = {"workflowId": wid, "completedSteps": log, "context": context}
        if step.get("artifacts"):
            args["artifacts"] = step["artifacts"]
        answer = await call(client, "workflow_next", args)
        seen.append(answer)
        if "error" in answer:
            break
        result = answer["result"]
        if result.get("isComplete") or not result.get("step"):
            break
        completed = [*completed, result["step"]["id"]]
        context = result.get("context") or context
    return seen


async def run_all(project: Path, tmp: Path) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workrail_mcp", "--project", str(project)],
        env=server_env(tmp),
        cwd=str(tmp),
    )
    async with Client(params) as client:
        return {c["id"]: await run_case(client, c) for c in CASES}


def run_cli(root: Path) -> dict[str, list[dict[str, Any]]]:
    """`workrail validate --format json` over every lint case's file(s), in one process."""
    files: dict[str, str] = {}
    for c in of_kind("lint"):
        directory = root / "checked" / "workflows" / c["id"]
        directory.mkdir(parents=True)
        path = directory / lint_file_name(c)
        path.write_text(lint_text(c))
        files[str(path)] = c["id"]
        if c.get("files_together"):
            for other in c.get("others", []):
                (directory / f"{other['id']}.json").write_text(json.dumps(other, indent=2))
    project = root / "cli-project"
    (project / "workflows").mkdir(parents=True)
    for wid, other in catalog_others(of_kind("lint")).items():
        (project / "workflows" / f"{wid}.json").write_text(json.dumps(other, indent=2))
    done = subprocess.run(
        [str(WORKRAIL), "validate", "--format", "json", str(root / "checked")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,
        env=server_env(root),
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    found = {files[f["path"]]: f["diagnostics"] for f in report["files"] if f["path"] in files}
    # every case's file was checked: a clean case must be clean, not left out
    assert sorted(found) == sorted(files.values()), sorted(set(files.values()) - set(found))
    return found


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("upstream-cases")
    build_project(root / "project")
    seen = asyncio.run(run_all(root / "project", root))
    seen["cli"] = run_cli(root)
    return seen


def cases(kind: str, *, one_document: bool = False) -> Any:
    chosen = [c for c in of_kind(kind) if not (one_document and c.get("files_together"))]
    return pytest.mark.parametrize("c", chosen, ids=[c["id"] for c in chosen])


def result_of(answer: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in answer, f"{c['upstream']} » {c['test']}: {answer['error']}"
    return answer["result"]


# --- the cases ------------------------------------------------------------------------------------


@cases("condition")
def test_condition(observed, c):
    result = result_of(observed[c["id"]], c)
    served = result["step"]["id"] if result.get("step") else None
    assert served == ("probe" if c["runs"] else "after"), f"{c['upstream']} » {c['test']}"


@cases("template")
def test_template(observed, c):
    prompt = result_of(observed[c["id"]], c)["step"]["prompt"]
    if "rendered" in c:
        assert prompt == c["rendered"], f"{c['upstream']} » {c['test']}"
    for piece in c.get("prompt_has", []):
        assert piece in prompt, f"{c['upstream']} » {c['test']}: {prompt!r}"
    if "prompt_shorter_than" in c:
        assert len(prompt) < c["prompt_shorter_than"], prompt


@cases("output")
def test_output(observed, c):
    result = result_of(observed[c["id"]], c)
    assert result["valid"] is c["valid"], f"{c['upstream']} » {c['test']}: {result}"
    for piece in c["issues_have"]:
        assert any(piece in issue for issue in result["issues"]), (piece, result["issues"])
    if "issue_count" in c:
        assert len(result["issues"]) == c["issue_count"], result["issues"]
    for piece in c.get("suggestions_have", []):
        assert any(piece in s for s in result["suggestions"]), (piece, result["suggestions"])


@cases("artifact")
def test_artifact(observed, c):
    result = result_of(observed[c["id"]], c)
    assert result["valid"] is c["valid"], f"{c['upstream']} » {c['test']}: {result}"
    if not c["valid"]:
        assert result["issues"], result
    for piece in c.get("issues_have", []):
        assert any(piece in issue for issue in result["issues"]), (piece, result["issues"])
    for piece in c.get("issues_lack", []):
        assert not any(piece in issue for issue in result["issues"]), (piece, result["issues"])


@cases("walk")
def test_walk(observed, c):
    seen = observed[c["id"]]
    assert len(seen) == len(c["calls"]), f"{c['upstream']} » {c['test']}: stopped early: {seen[-1]}"
    for number, (expected, answer) in enumerate(zip(c["calls"], seen, strict=True)):
        where = f"{c['upstream']} » {c['test']}, call {number + 1}"
        if "error" in expected:
            assert "error" in answer, f"{where}: {answer}"
            error = answer["error"]
            assert error["code"] == expected["error"], f"{where}: {error}"
            problems = error.get("data", {}).get("problems", [])
            codes = [p["code"] for p in problems]
            assert codes == expected.get("problems", []), f"{where}: {error}"
            text = " ".join([error["message"], *(p["message"] for p in problems)])
            for piece in expected.get("message_has", []):
                assert piece in text, f"{where}: {text}"
            continue
        result = result_of(answer, c)
        for skipped in expected.get("skipped_has", []):
            assert skipped in result.get("skipped", []), f"{where}: {result}"
        if expected.get("complete"):
            assert result["isComplete"] and not result.get("step"), f"{where}: {result}"
            continue
        step = result["step"]
        assert step["id"] == expected["step"], f"{where}: {step['id']}"
        if "loop_iteration" in expected:
            assert result["loop"]["iteration"] == expected["loop_iteration"], f"{where}: {result}"
        if "prompt" in expected:
            assert step["prompt"] == expected["prompt"], where
        for piece in expected.get("prompt_has", []):
            assert piece in step["prompt"].lower(), f"{where}: {step['prompt']!r}"
        for piece in expected.get("prompt_contains", []):
            assert piece in step["prompt"], f"{where}: {step['prompt']!r}"
        places = [step["prompt"].find(piece) for piece in expected.get("in_order", [])]
        assert -1 not in places and places == sorted(places), f"{where}: {step['prompt']!r}"
        for piece in expected.get("prompt_lacks", []):
            assert piece not in step["prompt"].lower(), f"{where}: {step['prompt']!r}"
        for piece in expected.get("guidance_has", []):
            assert piece in result["guidance"]["prompt"] or piece in json.dumps(step), where


def codes(diagnostics: list[dict[str, Any]], severity: str) -> list[str]:
    return sorted({d["code"] for d in diagnostics if d["severity"] == severity})


# A cycle across files is found where the files are checked together: by the CLI only.
@cases("lint", one_document=True)
def test_lint_by_mcp(observed, c):
    report = result_of(observed[c["id"]], c)
    where = f"{c['upstream']} » {c['test']}: {report['diagnostics']}"
    assert codes(report["diagnostics"], "error") == c["errors"], where
    for code in c.get("warnings", []):
        assert code in codes(report["diagnostics"], "warning"), where


@cases("lint")
def test_lint_by_cli(observed, c):
    found = observed["cli"][c["id"]]
    where = f"{c['upstream']} » {c['test']}: {found}"
    assert codes(found, "error") == c["errors"], where
    for code in c.get("warnings", []):
        assert code in codes(found, "warning"), where
