"""The dry run: what a run would do — steps, order, parallel groups, rendered argv — doing nothing.

The plan is of the workflow as served (compiled: prompt blocks rendered, routine templates
expanded). An agent step's prompt is rendered by ``step_prompt.render_step``, the function that
renders the stateless next step and a run's waiting step, so the plan shows the text an agent
would get before any step has run: parameters and the given context filled, anything else shown
as ``[unset: name]``. Conditions and command arguments that only earlier outputs can decide are
shown as decided at run time; secrets are shown as ``***``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..definition.declared import declared_secrets
from ..definition.steps import step_kind, walk_steps
from ..errors import SecurityViolation
from ..evaluation.conditions import evaluate
from ..evaluation.templates import TemplateError, find_references, render
from ..result_shapes import RunResult
from ..serving.step_prompt import render_step
from .commands import retry_policy
from .walker import condition_context
from .workspace import resolve_cwd

__all__ = ["RunNeeds", "has_commands", "has_prompts", "plan_run", "run_needs"]


def has_commands(workflow: Mapping[str, Any]) -> bool:
    return any(site.kind == "command" for site in walk_steps(workflow))


class RunNeeds(NamedTuple):
    commands: bool  # it has command steps
    prompts: bool  # it has prompt steps (a run of it may wait for the agent)
    sandbox: bool  # a command step wants the sandbox


def run_needs(workflow: Mapping[str, Any]) -> RunNeeds:
    """What a run of ``workflow`` needs, in one walk: a run's start asks all of it of a
    definition that may have thousands of steps."""
    kinds = set()
    sandbox = False
    for site in walk_steps(workflow):
        kinds.add(site.kind)
        if site.kind == "command" and site.step.get("sandbox"):
            sandbox = True
    return RunNeeds("command" in kinds, "prompt" in kinds, sandbox)


def has_prompts(workflow: Mapping[str, Any]) -> bool:
    """Whether a run of it may wait for the agent (and so have answers to show)."""
    return any(site.kind == "prompt" for site in walk_steps(workflow))


def _needs_outputs(node: Any) -> bool:
    """Whether a condition or a template reads earlier steps' outputs (unknown before the run)."""
    if isinstance(node, Mapping):
        if isinstance(node.get("var"), str) and node["var"].startswith("steps."):
            return True
        return any(_needs_outputs(v) for v in node.values())
    if isinstance(node, list):
        return any(_needs_outputs(v) for v in node)
    if isinstance(node, str):
        return any(ref.namespace == "steps" for ref in find_references(node))
    return False


def _decision(step: Mapping[str, Any], values: dict[str, Any]) -> str:
    condition = step.get("runCondition")
    if condition is None:
        return "runs"
    if _needs_outputs(condition):
        return "decided at run time (the condition reads earlier outputs)"
    try:
        return (
            "runs"
            if evaluate(condition, condition_context(values))
            else "skipped (runCondition is false)"
        )
    except ValueError as exc:
        return f"error: {exc}"


def _shown(text: str, values: dict[str, Any]) -> str:
    """A command's argument or environment value rendered where its values are known (secrets as
    ``***``); references to outputs kept as written."""
    out = text
    for ref in reversed(find_references(text)):
        if ref.namespace == "steps":
            continue
        try:
            piece = render(text[ref.span.start : ref.span.end], values)
        except TemplateError as exc:
            piece = f"<{exc}>"
        out = out[: ref.span.start] + piece + out[ref.span.end :]
    return out


def _command(step: Mapping[str, Any], values: dict[str, Any], project: Path) -> dict[str, Any]:
    run = step.get("run") or {}
    entry: dict[str, Any] = {"argv": [_shown(str(a), values) for a in run.get("command") or []]}
    if run.get("env"):
        entry["env"] = {k: _shown(str(v), values) for k, v in run["env"].items()}
    try:
        entry["cwd"] = str(resolve_cwd(project, run.get("cwd")))
    except SecurityViolation as exc:
        entry["cwd_error"] = exc.message
    attempts, delay, backoff = retry_policy(step)
    entry.update(
        {
            "timeout": run.get("timeoutSeconds"),
            "max_attempts": attempts,
            "on_failure": step.get("onFailure", "abort"),
            "sandbox": bool(step.get("sandbox")),
        }
    )
    if attempts > 1:
        entry["retry_delays"] = [round(delay * backoff**i, 3) for i in range(attempts - 1)]
    return entry


def _entry(
    workflow: Mapping[str, Any],
    step: Mapping[str, Any],
    values: dict[str, Any],
    project: Path,
    key: str | None = None,
) -> dict[str, Any]:
    kind = step_kind(step)
    entry: dict[str, Any] = {
        "step_name": key or step.get("id"),
        "kind": kind,
        "decision": _decision(step, values),
    }
    if kind == "command":
        entry.update(_command(step, values, project))
    elif kind == "prompt":
        # what the agent is served: no secrets (never rendered into prompts) and no outputs yet
        served = {k: values[k] for k in ("parameters", "context")}
        entry["prompt"] = render_step(workflow, step, {**served, "steps": {}}).prompt
    return entry


def _loop(
    workflow: Mapping[str, Any],
    step: Mapping[str, Any],
    by_id: dict[str, Any],
    values: dict[str, Any],
    project: Path,
) -> dict[str, Any]:
    spec = step.get("loop") or {}
    body = step.get("body")
    steps = (
        [by_id[body]]
        if isinstance(body, str) and body in by_id
        else [s for s in body or [] if isinstance(s, Mapping)]
    )
    return {
        "step_name": step.get("id"),
        "kind": "loop",
        "decision": _decision(step, values),
        "loop": {
            k: spec[k]
            for k in ("type", "count", "items", "condition", "maxIterations")
            if k in spec
        },
        "body": [_entry(workflow, s, values, project) for s in steps],
    }


def plan_run(
    workflow: Mapping[str, Any],
    parameters: dict[str, Any],
    context: dict[str, Any],
    project: Path,
    parallel_limit: int | None,
    timeout: float | None,
) -> RunResult:
    """The plan of ``workflow`` as served (the compiled definition, as a run gets it)."""
    secrets = {name: "***" for name in declared_secrets(workflow)}
    values = {"parameters": parameters, "context": dict(context), "steps": {}, "secrets": secrets}
    by_id = {s["id"]: s for s in workflow.get("steps", []) if isinstance(s, Mapping) and "id" in s}
    # A loop whose body names a top-level step owns it; an inline body (a list) owns nothing here.
    owned = {
        s.get("body")
        for s in workflow.get("steps", [])
        if step_kind(s) == "loop" and isinstance(s.get("body"), str)
    }
    groups: list[dict[str, Any]] = []
    for step in workflow.get("steps", []):
        if step.get("id") in owned:
            continue
        kind = step_kind(step)
        group: dict[str, Any] = {"order": len(groups) + 1, "parallel": kind == "parallel"}
        if kind == "parallel":
            limits = [n for n in (step.get("parallelLimit"), parallel_limit) if n]
            group.update(
                step_name=step.get("id"),
                decision=_decision(step, values),
                parallel_limit=min(limits) if limits else None,
                steps=[_entry(workflow, s, values, project) for s in step.get("steps") or []],
            )
        elif kind == "loop":
            group["steps"] = [_loop(workflow, step, by_id, values, project)]
        else:
            group["steps"] = [_entry(workflow, step, values, project)]
        groups.append(group)
    return {
        "status": "planned",
        "dry_run": True,
        "workflow_name": workflow.get("id"),
        "parameters": parameters,
        "timeout": timeout,
        "parallel_limit": parallel_limit,
        "groups": groups,
        "steps_total": sum(len(g["steps"]) for g in groups),
        "executed": False,
    }
