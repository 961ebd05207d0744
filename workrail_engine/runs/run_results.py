"""A run's result built as the orchestrator spec returns it (typed in `result_shapes`), and the
vocabulary of statuses."""

from __future__ import annotations

import json
from typing import Any

from ..definition.steps import executable_steps
from ..result_shapes import RunResult, step_result_of

__all__ = [
    "ACTIVE",
    "RUN_STATUSES",
    "STEP_STATUSES",
    "TERMINAL",
    "executable_steps",
    "run_input",
    "run_result",
    "stored_input",
    "with_definition",
    "step_result",
]

# success, failed, partial (some steps failed under onFailure: continue) come from the spec;
# running, waiting (a prompt step waits for the agent) and cancelled are the in-between states.
RUN_STATUSES = ("success", "failed", "partial", "running", "waiting", "cancelled")
ACTIVE = ("running", "waiting")
TERMINAL = ("success", "failed", "partial", "cancelled")
# interrupted: the process died while a step marked idempotent: false was running; not re-run.
STEP_STATUSES = ("success", "failed", "skipped", "interrupted", "cancelled")


# The run's definition in its stored input: JSON text, beside a "workflow" of its id and name
# alone (what the stores' filters by workflow read in SQL). DBOS copies every object of its input
# in Python before encoding it (its portable JSON): a third of a run's start for a definition of
# a thousand steps, where the text is one string to it. Runs stored before hold the definition
# itself under "workflow", and no text.
WORKFLOW_TEXT = "workflow_text"


def stored_input(run: dict[str, Any]) -> dict[str, Any]:
    """``run`` (a run's input, its "workflow" the definition) as it is stored."""
    workflow = run["workflow"]
    return {
        **run,
        "workflow": {k: workflow[k] for k in ("id", "name") if k in workflow},
        WORKFLOW_TEXT: json.dumps(workflow, ensure_ascii=False, separators=(",", ":")),
    }


def with_definition(run: dict[str, Any]) -> dict[str, Any]:
    """A run's input as stored, its "workflow" the whole definition (see `stored_input`)."""
    text = run.get(WORKFLOW_TEXT)
    if not isinstance(text, str):
        return run
    whole = {k: v for k, v in run.items() if k != WORKFLOW_TEXT}
    whole["workflow"] = json.loads(text)
    return whole


def run_input(status: Any) -> dict[str, Any]:
    """What a run was started with (workflow, parameters, deadline, ...), from DBOS's status of it."""
    inputs = status.input or {}
    args = inputs.get("args") if isinstance(inputs, dict) else None
    return with_definition(args[0]) if args else {}


def step_result(
    name: str, status: str, output: Any, duration: float, **extra: Any
) -> dict[str, Any]:
    result = {"step_name": name, "status": status, "output": output, "duration": round(duration, 4)}
    for k, v in extra.items():  # (a loop, not a comprehension: made at every step)
        if v is not None:
            result[k] = v
    return result


def run_result(
    run_id: str,
    status: str,
    results: list[dict[str, Any]],
    steps_total: int,
    execution_time: float,
    error_message: str | None = None,
    workflow_name: str | None = None,
) -> RunResult:
    done = {
        r["step_id"]
        for r in results
        if r.get("status") in ("success", "skipped") and "step_id" in r
    }
    out: RunResult = {
        "status": status,
        "workflow_id": run_id,
        "steps_completed": len(done),
        "steps_total": steps_total,
        "step_results": [step_result_of(r) for r in results],
        "execution_time": round(execution_time, 3),
        "error_message": error_message,
    }
    if workflow_name is not None:
        out["workflow_name"] = workflow_name
    return out
