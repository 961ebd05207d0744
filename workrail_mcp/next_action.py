"""The engine's next-action data, phrased as MCP tool calls.

The engine says what to report once a step is done (`workrail_engine.serving.navigator.NextStep`'s
``nextAction``, a run's ``waiting``); an agent on MCP reads it as the tool call to make. The CLI
phrases the same data as command lines.
"""

from __future__ import annotations

import json
from typing import Any

from workrail_engine.result_shapes import RunResult

__all__ = [
    "phrase_next",
    "next_retry_call",
    "phrase_run",
    "run_retry_call",
    "session_retry_call",
    "with_retry_call",
]


def _with_line(guidance: dict[str, Any], line: str) -> dict[str, Any]:
    prompt = str(guidance.get("prompt") or "")
    return {**guidance, "prompt": f"{prompt}\n\n{line}" if prompt else line}


def _next_line(action: dict[str, Any]) -> str:
    step = json.dumps(action["complete"])
    record = f"append {step} to completedSteps"
    if action.get("completeEach"):
        each = ", ".join(json.dumps(member) for member in action["completeEach"])
        record = f"append {step} (or each of {each}) to completedSteps"
    if action.get("repeatsPerIteration"):
        record += " (once per iteration, even if it is listed already)"
    line = f"When this step is done, {record} and call workflow_next again with the context returned here"
    if action.get("keepContext"):
        line += f": it carries the loop position in {', '.join(action['keepContext'])}"
    line += "."
    if action.get("outputTo"):
        line += f" {_output_line(action['outputTo'])}"
    if action.get("checkOutput"):
        line = "Submit the command's output to workflow_validate first. " + line
    return line


def _output_line(paths: list[str]) -> str:
    """Where the output goes: the context's ``steps`` object, as a later step's prompt reads it."""
    example = {"steps": {path.split(".")[1]: {"output": "<your output>"} for path in paths}}
    return (
        f"A later step reads this output: put it in that context as {' and '.join(paths)}, "
        f"e.g. {json.dumps(example)} merged into it."
    )


def phrase_next(guidance: dict[str, Any], action: dict[str, Any] | None) -> dict[str, Any]:
    """A ``workflow_next`` step's guidance ending with the call to make once the step is done
    (``action``: the engine's next action; None once the workflow is complete)."""
    if not action:
        return guidance
    return _with_line(guidance, _next_line(action))


def phrase_run(snap: RunResult) -> RunResult:
    """A run's state whose waiting step's guidance ends with the continue_workflow call."""
    waiting = snap.get("waiting")
    if not isinstance(waiting, dict) or not isinstance(waiting.get("guidance"), dict):
        return snap
    line = (
        f"When this step is done, call continue_workflow with workflow_id "
        f"{json.dumps(snap.get('workflow_id'))}, step_key {json.dumps(waiting.get('step_key'))} "
        "and your output (plus any context variables the step asked you to set)."
    )
    return {**snap, "waiting": {**waiting, "guidance": _with_line(waiting["guidance"], line)}}


def _session_output(retry: dict[str, Any]) -> dict[str, Any]:
    output: dict[str, Any] = {}
    if retry.get("notes"):
        output["notesMarkdown"] = retry["notes"]
    if retry.get("artifacts"):
        output["artifacts"] = retry["artifacts"]
    return output


def _with_context(
    call: dict[str, Any], params: dict[str, Any], retry: dict[str, Any] | None
) -> dict[str, Any]:
    """``call`` with the ``context`` of the engine's retry, when it has one, and ``fill``: the
    params that hold a placeholder (``context.NAME``) → the JSON Schema their value must meet."""
    if retry is None or retry.get("context") is None:
        return call
    params["context"] = retry["context"]
    return {**call, "fill": {f"context.{name}": schema for name, schema in retry["fill"].items()}}


def session_retry_call(continue_token: str, retry: dict[str, Any] | None) -> dict[str, Any]:
    """The session tools' call that sends the engine's ``retry`` answer (a blocked answer's): the
    continue token, and the answer that passes the step's checks when one is known (context
    values to fill in ``fill``)."""
    params: dict[str, Any] = {"continueToken": continue_token}
    if retry is not None and (retry.get("notes") or retry.get("artifacts")):
        params["output"] = _session_output(retry)
    return _with_context({"tool": "continue_workflow", "params": params}, params, retry)


def run_retry_call(run_id: str, step_key: Any, retry: dict[str, Any] | None) -> dict[str, Any]:
    """The run tools' call that sends the engine's ``retry`` answer to the step ``step_key``."""
    params: dict[str, Any] = {"workflow_id": run_id, "step_key": str(step_key)}
    if retry is not None:
        params["output"] = retry.get("notes") or ""
        if retry.get("artifacts"):
            params["artifacts"] = retry["artifacts"]
    return _with_context({"tool": "continue_workflow", "params": params}, params, retry)


def next_retry_call(
    workflow_id: str,
    completed_steps: list[str],
    context: dict[str, Any],
    retry: dict[str, Any] | None,
) -> dict[str, Any]:
    """``workflow_next``'s call that hands over the engine's ``retry`` artifacts with the step
    just done again (the same completed steps and context)."""
    params: dict[str, Any] = {
        "workflowId": workflow_id,
        "completedSteps": completed_steps,
        "context": context,
    }
    if retry is not None:
        params["artifacts"] = retry["artifacts"]
    return {"tool": "workflow_next", "params": params}


def with_retry_call(blockers: list[dict[str, Any]], call: dict[str, Any]) -> dict[str, Any]:
    """Upstream's blocker report, each blocker carrying the exact call that retries the step."""
    return {"blockers": [{**blocker, "retryCall": call} for blocker in blockers]}
