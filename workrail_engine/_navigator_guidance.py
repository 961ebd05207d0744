"""The ``guidance`` of a next step: the prompt an agent reads, enriched with what the workflow says.

The enriched prompt puts together, in this order: the agent role, the workflow's preconditions and
clarification questions (first step only), where the agent is in a loop, the step's own prompt
(templates filled from the context), its guidance bullets, the workflow's metaGuidance, the
validation criteria in plain words, and how to report the step done.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .rules import describe_criteria
from .step_prompt import RenderedStep, is_delegation
from .steps import step_kind
from .templates import TemplateError, find_references, lookup, render_for_agent

__all__ = ["completion_guidance", "fill_templates", "step_guidance"]


def fill_templates(text: str, context: Mapping[str, Any]) -> str:
    """Fill ``{{context.*}}`` and ``{{parameters.*}}`` from the context; leave the rest as written.

    Step outputs are not known to a stateless navigator, and secrets are never put in guidance.
    """
    values = {
        "context": context,
        "parameters": context.get("parameters")
        if isinstance(context.get("parameters"), Mapping)
        else {},
    }
    for ref in reversed(find_references(text)):
        if ref.namespace not in values:
            continue
        try:
            value = lookup(values, ref)
        except TemplateError:
            continue
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = text[: ref.span.start] + shown + text[ref.span.end :]
    return text


def _bullets(title: str, items: Any) -> list[str]:
    if not isinstance(items, list) or not items:
        return []
    return [f"{title}\n" + "\n".join(f"- {item}" for item in items)]


def _criteria(step: Mapping, context: Mapping) -> list[str]:
    if step_kind(step) != "parallel" or is_delegation(step):
        return describe_criteria(step.get("validationCriteria"), context)
    return [
        f"[{member['id']}] {line}"
        for member in step.get("steps", [])
        for line in describe_criteria(member.get("validationCriteria"), context)
    ]


def _command_text(step: Mapping, context: Mapping) -> str:
    run = step.get("run") if isinstance(step.get("run"), Mapping) else {}
    argv = [fill_templates(str(arg), context) for arg in run.get("command", [])]
    lines = [
        "Command step: the WorkRail engine executes it when the workflow runs with run_workflow. "
        "Following the workflow step by step, run exactly this argv yourself (no shell) if your environment allows it, "
        "then submit its output to workflow_validate:",
        "  " + json.dumps(argv, ensure_ascii=False),
    ]
    if run.get("cwd"):
        lines.append(f"Working directory: {fill_templates(str(run['cwd']), context)}")
    if run.get("env"):
        lines.append(
            "Environment: "
            + ", ".join(
                f"{key}={fill_templates(str(value), context)}" for key, value in run["env"].items()
            )
        )
    if run.get("timeoutSeconds"):
        lines.append(f"Time limit: {run['timeoutSeconds']} seconds.")
    if any("{{secrets." in line for line in lines):
        lines.append(
            "{{secrets.NAME}} stands for the environment variable NAME; its value is never shown here."
        )
    return "\n".join(lines)


def _body(step: Mapping, context: Mapping, rendered: RenderedStep | None = None) -> list[str]:
    kind = step_kind(step)
    title = rendered.title if rendered else step.get("title") or step["id"]
    if rendered is not None and (kind == "prompt" or is_delegation(step)):
        parts = [f"Step: {title} ({step['id']})", rendered.prompt]
        if step.get("askForFiles"):
            parts.append("Ask the user for the files this step needs before you start.")
        return parts
    if kind == "command":
        return [f"Step: {title} ({step['id']})", _command_text(step, context)]
    if kind == "parallel":
        parts = [
            f"Step: {title} ({step['id']}) — a parallel group: these {len(step['steps'])} steps are independent; "
            "do them in any order or at the same time."
        ]
        for member in step["steps"]:
            parts.append(
                f"## {member.get('title') or member['id']} ({member['id']})\n"
                + "\n\n".join(_body(member, context)[1:])
            )
        return parts
    parts = [f"Step: {title} ({step['id']})", fill_templates(str(step.get("prompt", "")), context)]
    if step.get("askForFiles"):
        parts.append("Ask the user for the files this step needs before you start.")
    return parts


def _loop_line(loop: Mapping) -> str:
    total = (
        f" of {loop['total']}"
        if loop.get("total") is not None
        else f" (at most {loop['maxIterations']})"
    )
    line = f"Loop {loop['id']!r}: iteration {loop['iteration']}{total}."
    if "item" in loop:
        line += f" Current item: {json.dumps(loop['item'], ensure_ascii=False)}."
    return line


def _done_line(step: Mapping, loop: Mapping | None) -> str:
    if step_kind(step) == "parallel" and not is_delegation(step):
        ids = ", ".join(json.dumps(member["id"]) for member in step["steps"])
        record = f'append "{step["id"]}" (or each of {ids}) to completedSteps'
    else:
        record = f'append "{step["id"]}" to completedSteps'
    if loop:
        record += " (once per iteration, even if it is listed already)"
        return (
            f"When this step is done, {record} and call workflow_next again with the context returned here: "
            "it carries the loop position in _loops."
        )
    return f"When this step is done, {record} and call workflow_next again with the context returned here."


def step_guidance(
    workflow: Mapping,
    step: Mapping,
    context: Mapping,
    *,
    first: bool,
    loop: Mapping | None,
    rendered: RenderedStep | None = None,
) -> dict[str, Any]:
    members = step.get("steps", []) if step_kind(step) == "parallel" else []
    members = [m for m in members if isinstance(m, Mapping)]
    confirm = (rendered.requires_confirmation if rendered else False) or any(
        member.get("requireConfirmation") is True for member in members
    )
    criteria = _criteria(step, context)
    parts: list[str] = []
    if step.get("agentRole"):
        parts.append(f"Role: {step['agentRole']}")
    if first:
        parts += _bullets("Before you start, make sure that:", workflow.get("preconditions"))
        parts += _bullets(
            "Ask the user first if it is not clear yet:", workflow.get("clarificationPrompts")
        )
    if loop:
        parts.append(_loop_line(loop))
    parts += _body(step, context, rendered)
    bare = {k: v for k, v in context.items() if k != "_loops"}
    values = {
        "context": bare,
        "parameters": bare.get("parameters") or {},
        "steps": bare.get("steps") or {},
    }
    parts += _bullets(
        "Guidance:", [render_for_agent(str(g), values, bare) for g in step.get("guidance") or []]
    )
    parts += _bullets("Throughout this workflow:", workflow.get("metaGuidance"))
    parts += _bullets("Your output will be checked against:", criteria)
    if confirm:
        parts.append("Ask the user to confirm the result before moving on.")
    parts.append(_done_line(step, loop))
    guidance: dict[str, Any] = {
        **(rendered.guidance_fields() if rendered else {}),
        "prompt": "\n\n".join(part for part in parts if part),
        "requiresConfirmation": confirm,
        "validationCriteria": criteria,
    }
    hint = step.get("modelHint") or _shared_hint(members)
    if hint:
        guidance["modelHint"] = hint
    return guidance


def _shared_hint(members: list) -> str | None:
    hints = {member.get("modelHint") for member in members}
    return hints.pop() if len(hints) == 1 else None


def completion_guidance(workflow: Mapping) -> dict[str, Any]:
    name = workflow.get("name") or workflow.get("id") or "the workflow"
    return {
        "prompt": f"All steps of {name} are complete. Summarize what was done for the user.",
        "requiresConfirmation": False,
        "validationCriteria": [],
    }
