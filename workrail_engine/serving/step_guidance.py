"""The ``guidance`` of a next step: the prompt an agent reads, enriched with what the workflow says.

The enriched prompt puts together, in this order: the agent role, the workflow's preconditions and
clarification questions (first step only), where the agent is in a loop, the step's own prompt
(templates filled from the context), its guidance bullets, the workflow's metaGuidance, the
validation criteria in plain words. How to report the step done is not text here: `next_action`
returns it as data and each front end phrases it in its own terms (a tool call, a command line).
The run path renders a waiting step with this same function.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Set
from typing import Any

from ..definition.steps import step_kind
from ..evaluation.rules import describe_criteria
from ..evaluation.templates import TemplateError, find_references, lookup, render_for_agent
from .step_prompt import RenderedStep, is_delegation

__all__ = [
    "completion_guidance",
    "fill_templates",
    "next_action",
    "step_criteria",
    "step_guidance",
]


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


def step_criteria(step: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The validation criteria the guidance of ``step`` describes, each with its line prefix: the
    step's own, or each member's of a parallel group the agent does member by member."""
    if step_kind(step) != "parallel" or is_delegation(step):
        return [("", step.get("validationCriteria"))]
    members = step.get("steps", [])
    return [(f"[{member['id']}] ", member.get("validationCriteria")) for member in members]


def _criteria(step: Mapping[str, Any], context: Mapping[str, Any], checked: bool) -> list[str]:
    return [
        prefix + line
        for prefix, criteria in step_criteria(step)
        for line in describe_criteria(criteria, context, checked=checked)
    ]


def _command_text(step: Mapping[str, Any], context: Mapping[str, Any]) -> str:
    run: Mapping[str, Any] = step["run"] if isinstance(step.get("run"), Mapping) else {}
    argv = [fill_templates(str(arg), context) for arg in run.get("command", [])]
    lines = [
        "Command step: in a run, the WorkRail engine executes it itself. Following the workflow "
        "step by step, run exactly this argv yourself (no shell) if your environment allows it, "
        "then have its output checked against the step's criteria:",
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


def _body(
    step: Mapping[str, Any], context: Mapping[str, Any], rendered: RenderedStep | None = None
) -> list[str]:
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


def _loop_line(loop: Mapping[str, Any]) -> str:
    total = (
        f" of {loop['total']}"
        if loop.get("total") is not None
        else f" (at most {loop['maxIterations']})"
    )
    line = f"Loop {loop['id']!r}: iteration {loop['iteration']}{total}."
    if "item" in loop:
        line += f" Current item: {json.dumps(loop['item'], ensure_ascii=False)}."
    return line


def next_action(
    step: Mapping[str, Any], loop: Mapping[str, Any] | None, read_outputs: Set[str] = frozenset()
) -> dict[str, Any]:
    """What the agent reports once ``step`` is done, as data for a front end to phrase.

    ``complete``: the id to append to the completed-steps log (``completeEach``: for a parallel
    group, its members' ids may be appended instead); ``keepContext``: the context keys to pass
    back unchanged (the loop bookkeeping); ``repeatsPerIteration``: inside a loop, the id is
    appended once per iteration even when listed already; ``checkOutput``: a command step's output
    should be checked against its criteria first; ``artifacts``: the step's output contract or
    assessments ask for artifacts, handed over with the report that completes it; ``outputTo``:
    the context paths where the agent puts the output of this step (or of a parallel group's
    members) because a step of the workflow reads it (``read_outputs``: the ids of those steps).
    """
    action: dict[str, Any] = {"complete": step["id"], "passContext": True}
    kind = step_kind(step)
    if kind == "parallel" and not is_delegation(step):
        action["completeEach"] = [member["id"] for member in step["steps"]]
    if step.get("outputContract") or step.get("assessmentRefs"):
        action["artifacts"] = True
    if kind == "command":
        action["checkOutput"] = True
    produced = [step["id"], *action.get("completeEach", [])]
    read = [f"steps.{step_id}.output" for step_id in produced if step_id in read_outputs]
    if read:
        action["outputTo"] = read
    if loop:
        action["repeatsPerIteration"] = True
        action["keepContext"] = ["_loops"]
    return action


def step_guidance(
    workflow: Mapping[str, Any],
    step: Mapping[str, Any],
    context: Mapping[str, Any],
    *,
    first: bool,
    loop: Mapping[str, Any] | None,
    rendered: RenderedStep | None = None,
    criteria_checked: bool = False,
) -> dict[str, Any]:
    """The guidance of ``step``; ``rendered`` is the step as ``step_prompt.render_step`` renders it
    (the same for the stateless next step and a run's waiting step). ``criteria_checked``: the
    caller has checked the `step_criteria` of ``step`` already."""
    members = step.get("steps", []) if step_kind(step) == "parallel" else []
    members = [m for m in members if isinstance(m, Mapping)]
    confirm = (rendered.requires_confirmation if rendered else False) or any(
        member.get("requireConfirmation") is True for member in members
    )
    criteria = _criteria(step, context, criteria_checked)
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


def _shared_hint(members: list[Any]) -> str | None:
    hints = {member.get("modelHint") for member in members}
    return hints.pop() if len(hints) == 1 else None


def completion_guidance(workflow: Mapping[str, Any]) -> dict[str, Any]:
    name = workflow.get("name") or workflow.get("id") or "the workflow"
    return {
        "prompt": f"All steps of {name} are complete. Summarize what was done for the user.",
        "requiresConfirmation": False,
        "validationCriteria": [],
    }
