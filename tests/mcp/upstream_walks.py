"""Walk every workflow of a folder through a server's session tools, with scripted answers, and
say how each walk ended.

The answers depend only on the workflow files, never on what the server says, so two servers
given the same folder get the same answers and their endings can be compared
(bench/upstream_walks.py runs upstream WorkRail v3.121.0 and ``workrail-mcp --tools upstream``
side by side; tests/mcp/test_upstream_walks.py checks ours against upstream's recorded endings).
Two walks per workflow:

- ``notes``: every step answered with notes only — an agent that ignores output contracts and
  assessments;
- ``rails``: the answers an agent on upstream's rails sends — on a step with an output contract,
  the contract's artifact and no notes; on a step with assessments, notes and one rating per
  assessment at a level that fires no follow-up; elsewhere, notes.

No context is ever sent, so every condition and loop sees only what the answers put there.
An ending is ``complete``, ``blocked`` (at which step, with which blocker codes), ``error`` (the
tool's error code) or ``unfinished`` (still going after ``MAX_ANSWERS`` answers). Upstream's
injected onboarding step (``wr-system-onboarding``) is advanced without output and not counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

WALKS = ("notes", "rails")
MAX_ANSWERS = 120  # the longest of upstream's 42 workflows takes about 40 answers
ONBOARDING_STEP = "wr-system-onboarding"
NOTES = (
    "## What I did\n- Worked through the step as asked and wrote down the decisions.\n"
    "## What I produced\n- Notes for the record; nothing left open."
)
# Walks whose ending differs from upstream's on purpose, each explained in docs/compatibility.md
# ("Upstream's workflows walked side by side"): "<workflow id> <walk>" -> why, short.
DOCUMENTED: dict[str, str] = {
    "wr.differentiation rails": "upstream's validator knows no wr.contracts.differentiation_handoff:"
    " it reads any artifact as missing, so its own workflow never finishes; ours checks it",
    "wr.gate-eval-generic notes": "a step with an output contract and assessments: ours checks"
    " both, upstream only the contract (its assessments are never required)",
}
_WHEN = "2026-01-01T00:00:00Z"
_ONE = ["Kept to the agreed scope."]
# One artifact per contract of upstream's workflows, each valid under upstream's own schema of it
# (v3.121.0, src/v2/durable-core/schemas/artifacts/): the loop stops, the verdicts approve.
CONTRACT_ARTIFACTS: dict[str, dict[str, Any]] = {
    "wr.contracts.loop_control": {"kind": "wr.loop_control", "decision": "stop"},
    "wr.contracts.review_verdict": {
        "kind": "wr.review_verdict",
        "verdict": "clean",
        "confidence": "high",
        "findings": [],
        "summary": "Read every change; nothing to raise.",
    },
    "wr.contracts.gate_verdict": {
        "kind": "wr.gate_verdict",
        "version": 1,
        "verdict": "approved",
        "confidence": "high",
        "rationale": "Every criterion of the gate is met by the evidence gathered.",
    },
    "wr.contracts.discovery_handoff": {
        "kind": "wr.discovery_handoff",
        "version": 1,
        "selectedDirection": "Extend the existing exporter.",
        "designDocPath": "docs/design.md",
        "confidenceBand": "high",
        "keyInvariants": _ONE,
    },
    "wr.contracts.shaping_handoff": {
        "kind": "wr.shaping_handoff",
        "version": 1,
        "pitchPath": "docs/pitch.md",
        "selectedShape": "A flag on the export command.",
        "appetite": "small batch",
        "keyConstraints": _ONE,
        "rabbitHoles": _ONE,
        "outOfScope": _ONE,
        "validationChecklist": _ONE,
    },
    "wr.contracts.coding_handoff": {
        "kind": "wr.coding_handoff",
        "version": 1,
        "keyDecisions": _ONE,
        "knownLimitations": _ONE,
        "testsAdded": ["tests/test_export.py"],
        "filesChanged": ["export/cli.py"],
    },
    "wr.contracts.differentiation_handoff": {
        "kind": "wr.differentiation_handoff",
        "version": 1,
        "schemaVersion": "1.0.0",
        "generatedAt": _WHEN,
        "evidenceFreshness": {"oldestCapturedAt": _WHEN, "newestCapturedAt": _WHEN},
        "validationChecklist": _ONE,
        "shapingHandoff": {
            "rawIdea": "Exports that resume.",
            "problem": "A nightly export fails halfway and starts over.",
            "baseline": "People rerun it by hand.",
            "appetiteHint": "small_batch",
            "noGosHints": [],
            "constraints": {"teamSize": 2, "technicalCapabilities": ["python"]},
            "evidenceTopK": [],
            "defensibilityClaim": {"power": "Process Power", "cannibalization": "none"},
        },
    },
}


def workflow_files(folder: Path) -> list[Path]:
    """The workflows upstream serves from ``folder``: every JSON file but the examples."""
    return sorted(
        p for p in folder.rglob("*.json") if "examples" not in p.relative_to(folder).parts
    )


def _steps(steps: Any) -> Iterator[Mapping[str, Any]]:
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, Mapping):
            yield step
            yield from _steps(step.get("body"))


def steps_by_id(definition: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Every step written in the file (loop bodies included), by id."""
    return {str(step.get("id")): step for step in _steps(definition.get("steps"))}


def _quiet_level(dimension: Mapping[str, Any], firing: set[str]) -> str:
    levels = [str(level) for level in dimension.get("levels", [])]
    calm = [level for level in levels if level.strip().lower() not in firing]
    return (calm or levels or ["high"])[-1]


def rated(definition: Mapping[str, Any], step: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One ``wr.assessment`` per assessment the step names, each dimension at a level that fires
    none of the step's follow-ups."""
    defined = {a.get("id"): a for a in definition.get("assessments", []) if isinstance(a, Mapping)}
    firing = {
        str(c.get("when", {}).get("anyEqualsLevel", "")).strip().lower()
        for c in step.get("assessmentConsequences", [])
        if isinstance(c, Mapping)
    }
    artifacts = []
    for ref in step.get("assessmentRefs", []):
        assessment = defined.get(ref, {})
        dimensions = {
            str(d.get("id")): _quiet_level(d, firing) for d in assessment.get("dimensions", [])
        }
        artifacts.append({"kind": "wr.assessment", "assessmentId": ref, "dimensions": dimensions})
    return artifacts


def answer(walk: str, definition: Mapping[str, Any], step: Mapping[str, Any]) -> dict[str, Any]:
    """The ``output`` the walk sends for ``step`` (a step not in the file gets notes)."""
    if walk == "notes":
        return {"notesMarkdown": NOTES}
    contract = step.get("outputContract")
    artifacts = rated(definition, step)
    if isinstance(contract, Mapping):
        artifacts.append(CONTRACT_ARTIFACTS[str(contract.get("contractRef"))])
        return {"artifacts": artifacts}
    return {"notesMarkdown": NOTES, **({"artifacts": artifacts} if artifacts else {})}


class ToolCaller:
    """What a walk needs of a client: ``call(tool, arguments) -> (isError, JSON of the text)``."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        raise NotImplementedError


class SdkCaller(ToolCaller):
    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        result = await self.client.call_tool(tool, arguments)
        return bool(result.is_error), json.loads(result.content[0].text)


def _error(body: Mapping[str, Any]) -> dict[str, Any]:
    return {"ending": "error", "code": body.get("code") or body.get("error", {}).get("code")}


async def walk(
    caller: ToolCaller, definition: Mapping[str, Any], walk_name: str, workspace: str
) -> dict[str, Any]:
    """``{steps: [answered step ids], ending, at?, codes?, code?}`` for one walk."""
    by_id = steps_by_id(definition)
    failed, state = await caller.call(
        "start_workflow",
        {"workflowId": definition["id"], "workspacePath": workspace, "goal": "walk for the record"},
    )
    if failed:
        return {"steps": [], **_error(state)}
    answered: list[str] = []
    while not state.get("isComplete"):
        if len(answered) >= MAX_ANSWERS:
            return {"steps": answered, "ending": "unfinished"}
        step_id = state["pending"]["stepId"]
        arguments: dict[str, Any] = {
            "continueToken": state["continueToken"],
            "intent": "advance",
            "workspacePath": workspace,
        }
        if step_id != ONBOARDING_STEP:
            arguments["output"] = answer(walk_name, definition, by_id.get(step_id, {}))
            answered.append(step_id)
        failed, state = await caller.call("continue_workflow", arguments)
        if failed:
            return {"steps": answered, **_error(state)}
        if state.get("kind") == "blocked":
            codes = sorted(b["code"] for b in state["blockers"]["blockers"])
            return {"steps": answered, "ending": "blocked", "at": step_id, "codes": codes}
    return {"steps": answered, "ending": "complete"}


async def walk_all(
    caller: ToolCaller, folder: Path, workspace: str, only: set[str] | None = None
) -> dict[str, dict[str, Any]]:
    """``{"<workflow id> <walk>": ending}`` for every workflow of ``folder``, both walks."""
    endings: dict[str, dict[str, Any]] = {}
    for path in workflow_files(folder):
        definition = json.loads(path.read_text(encoding="utf-8"))
        if only and definition["id"] not in only:
            continue
        for walk_name in WALKS:
            endings[f"{definition['id']} {walk_name}"] = await walk(
                caller, definition, walk_name, workspace
            )
    return endings


def summary(ending: Mapping[str, Any]) -> str:
    """One line: how the walk ended, after how many answers."""
    n = len(ending["steps"])
    if ending["ending"] == "blocked":
        return f"blocked at {ending['at']} ({', '.join(ending['codes'])}) after {n}"
    if ending["ending"] == "error":
        return f"error {ending['code']} after {n}"
    return f"{ending['ending']} after {n}"
