"""What an agent is told for one step, the same whether it walks the workflow step by step or a
run waits on it: the step's title and prompt with every template filled, the prompt fragments
whose ``when`` holds, the artifact its output contract asks for, the assessments it asks for, the
delegations of an agent parallel step, the context variables its ``sets`` asks for (with their
allowed values, from the workflow's declared ``context``), the metrics its ``metricsProfile``
asks for, and whether the user must confirm.

``values`` holds ``parameters``, ``context`` and ``steps`` (earlier outputs); upstream's bare
``{{name}}`` and conditions read the parameters and the context by bare name. Secrets are never
filled in. Nothing here names a protocol: front ends phrase how the agent hands things back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..definition.declared import declared_context
from ..evaluation.conditions import MISSING, evaluate, resolve
from ..evaluation.contracts import LOOP_CONTROL, assessment_lines, contract_lines, step_assessments
from ..evaluation.templates import render_for_agent
from .metrics_profile import metrics_footer

__all__ = ["RenderedStep", "bare_names", "is_delegation", "render_step"]

CONFIRMATION_KINDS = ("coordinator_eval", "human_approval")


@dataclass
class RenderedStep:
    title: str
    prompt: str
    requires_confirmation: bool
    confirmation_kind: str | None = None
    delegations: list[dict[str, Any]] | None = None
    output_contract: dict[str, Any] | None = None
    assessments: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def guidance_fields(self) -> dict[str, Any]:
        """The structured part of a step's guidance (the prompt itself is added by the caller)."""
        out: dict[str, Any] = {"requiresConfirmation": self.requires_confirmation}
        if self.confirmation_kind:
            out["confirmationKind"] = self.confirmation_kind
        if self.delegations is not None:
            out["delegations"] = self.delegations
        if self.output_contract:
            out["outputContract"] = self.output_contract
        if self.assessments:
            out["assessments"] = self.assessments
        return out


def is_delegation(step: Mapping[str, Any]) -> bool:
    """An upstream agent parallel step: sub-agents to start, not command steps to run."""
    return step.get("type") == "parallel" and isinstance(step.get("parallelDelegations"), list)


def bare_names(values: Mapping[str, Any]) -> dict[str, Any]:
    """What ``{{name}}`` and a condition's ``var`` see: parameters, overridden by the context."""
    params = values.get("parameters")
    return {**(params if isinstance(params, Mapping) else {}), **values.get("context", {})}


def render_step(
    workflow: Mapping[str, Any],
    step: Mapping[str, Any],
    values: Mapping[str, Any],
    loop: Mapping[str, Any] | None = None,
) -> RenderedStep:
    """The step as the agent reads it; ``loop``: its loop's position (``{type, iteration,
    maxIterations}``) when the step runs in a loop body."""
    bare = bare_names(values)
    notes: list[str] = []

    def text(value: Any) -> str:
        return render_for_agent(str(value), values, bare) if value is not None else ""

    confirm, kind = _confirmation(step.get("requireConfirmation"), bare, notes)
    rendered = RenderedStep(text(step.get("title") or step.get("id")), "", confirm, kind)
    rendered.notes = notes
    if is_delegation(step):
        rendered.delegations = _delegations(step, bare, notes)
        rendered.prompt = _with_metrics(
            _delegation_prompt(rendered.delegations), workflow, step.get("id")
        )
        return rendered
    parts = [text(step.get("prompt", ""))]
    for fragment in step.get("promptFragments") or []:
        if isinstance(fragment, Mapping) and _holds(fragment.get("when"), bare, notes):
            parts.append(text(fragment.get("text", "")))
    contract = step.get("outputContract")
    if isinstance(contract, Mapping) and contract.get("contractRef"):
        rendered.output_contract = {
            "contractRef": contract["contractRef"],
            "required": contract.get("required", True) is not False,
        }
        parts.append("\n".join(contract_lines(contract)))
    assessments = step_assessments(workflow, step)
    if assessments:
        rendered.assessments = [dict(a) for a in assessments]
        parts.append("\n".join(assessment_lines(assessments)))
    parts.append(context_request(workflow, step))
    parts.append(_final_pass(step, loop))
    rendered.prompt = _with_metrics(
        "\n\n".join(part for part in parts if part), workflow, step.get("id")
    )
    return rendered


def context_request(workflow: Mapping[str, Any], step: Mapping[str, Any]) -> str:
    """The paragraph that asks the agent to set the step's ``sets``: each variable with its
    description and its allowed values (the declared ``enum``, else its ``type``), and what
    leaving out an optional one (a ``default``) means. Names the workflow does not declare are
    listed bare (WR309 reports them)."""
    names = step.get("sets")
    if not isinstance(names, list) or not names:
        return ""
    declared = declared_context(workflow) or {}
    lines = ["Set these context variables when you answer this step:"]
    for name in names:
        if isinstance(name, str):
            lines.append(f"- {name}{_allowed(declared.get(name, {}))}")
    return "\n".join(lines) if len(lines) > 1 else ""


def _allowed(schema: Mapping[str, Any]) -> str:
    description = schema.get("description")
    about = f" ({description})" if isinstance(description, str) and description.strip() else ""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        values = ", ".join(json.dumps(value, ensure_ascii=False) for value in enum)
        return f"{about}: one of {values}{_unless_left_out(schema)}"
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    shown = " or ".join(_TYPE_WORDS.get(k, str(k)) for k in kinds)
    if kinds == ["array"] and isinstance(schema.get("items"), Mapping):
        item_kind = schema["items"].get("type")
        if isinstance(item_kind, str) and item_kind in _TYPE_WORDS:
            shown = f"a list of {item_kind}s"
    if kinds in (["number"], ["integer"]):
        shown += _bounds(schema)
    return f"{about}: {shown}{_unless_left_out(schema)}" if shown else about


def _bounds(schema: Mapping[str, Any]) -> str:
    """A number's declared ``minimum``/``maximum`` in words."""
    low, high = schema.get("minimum"), schema.get("maximum")
    numeric = (int, float)
    if isinstance(low, numeric) and isinstance(high, numeric):
        return f" from {low} to {high}"
    if isinstance(low, numeric):
        return f" of at least {low}"
    if isinstance(high, numeric):
        return f" of at most {high}"
    return ""


def _unless_left_out(schema: Mapping[str, Any]) -> str:
    """A declared ``default`` makes the variable optional: say what leaving it out means."""
    if "default" not in schema:
        return ""
    return f" ({json.dumps(schema['default'], ensure_ascii=False)} if you leave it out)"


_TYPE_WORDS = {
    "string": "a string",
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def _final_pass(step: Mapping[str, Any], loop: Mapping[str, Any] | None) -> str:
    """On the last iteration a while/until loop may run, its body steps say so (as upstream's
    loop banner does), so that the agent wraps up rather than starts new work. The step that
    hands over the loop decision is left alone: its decision no longer matters."""
    if not loop or loop.get("type") not in ("while", "until"):
        return ""
    if loop.get("iteration") != loop.get("maxIterations"):
        return ""
    contract = step.get("outputContract")
    if isinstance(contract, Mapping) and contract.get("contractRef") == LOOP_CONTROL:
        return ""
    limit = loop["maxIterations"]
    return (
        f"This is the final pass ({limit} of {limit}) of this loop: check that the earlier "
        "passes' changes landed, flag only regressions or clear misses, and start nothing new."
    )


def _with_metrics(prompt: str, workflow: Mapping[str, Any], step_id: Any) -> str:
    """The prompt with the workflow's ``metricsProfile`` footer last, where upstream puts it (the
    last thing the agent reads before it moves on)."""
    footer = metrics_footer(workflow, step_id)
    return "\n\n".join(part for part in (prompt, footer) if part)


def _holds(condition: Any, bare: Mapping[str, Any], notes: list[str]) -> bool:
    if condition is None:
        return True
    try:
        return evaluate(condition, bare, notes)
    except ValueError as error:
        notes.append(f"A condition could not be evaluated and counts as false: {error}")
        return False


def _confirmation(rule: Any, bare: Mapping[str, Any], notes: list[str]) -> tuple[bool, str | None]:
    """``requireConfirmation``: a boolean, a condition, or ``{kind, condition?}``."""
    if rule is None or isinstance(rule, bool):
        return bool(rule), None
    if isinstance(rule, Mapping) and rule.get("kind") in CONFIRMATION_KINDS:
        holds = _holds(rule.get("condition"), bare, notes)
        return holds, rule["kind"] if holds else None
    if isinstance(rule, Mapping):
        return _holds(rule, bare, notes), None
    return False, None


def _delegations(
    step: Mapping[str, Any], bare: Mapping[str, Any], notes: list[str]
) -> list[dict[str, Any]]:
    out = []
    for delegation in step.get("parallelDelegations") or []:
        if not isinstance(delegation, Mapping):
            continue
        if not _holds(delegation.get("runCondition"), bare, notes):
            continue
        inputs: dict[str, Any] = {}
        for parent_key, child_key in (delegation.get("contextMapping") or {}).items():
            value = resolve(bare, parent_key)
            if value is not MISSING and value is not None:
                inputs[child_key] = value
        inputs.update(delegation.get("args") or {})
        entry: dict[str, Any] = {
            "workflowId": delegation.get("workflowId"),
            "goal": delegation.get("goal") or f"Run {delegation.get('workflowId')}",
            "inputs": inputs,
        }
        for key in ("modelTier", "allowedTools"):
            if delegation.get(key):
                entry[key] = delegation[key]
        out.append(entry)
    return out


def _delegation_prompt(delegations: list[dict[str, Any]]) -> str:
    if not delegations:
        return (
            "Every delegation of this step has a runCondition that is false: there is nothing to "
            "hand off, and the step is done."
        )
    lines = [
        f"Start these {len(delegations)} delegations at the same time, each as a sub-agent of "
        "its own that follows the named workflow. Wait until all have finished, then combine "
        "their results yourself: the synthesis stays with you."
    ]
    for number, delegation in enumerate(delegations, 1):
        lines.append(f"\n### {number}. {delegation['workflowId']}")
        lines.append(f"- Goal: {delegation['goal']}")
        if delegation["inputs"]:
            lines.append("- Inputs:")
            lines += [
                f"  - {key}: {value if isinstance(value, str) else json.dumps(value)}"
                for key, value in delegation["inputs"].items()
            ]
        else:
            lines.append("- Inputs: none")
        if delegation.get("modelTier"):
            lines.append(f"- Model tier: {delegation['modelTier']}")
        if delegation.get("allowedTools"):
            lines.append(f"- Tools: {', '.join(delegation['allowedTools'])}")
    return "\n".join(lines)
