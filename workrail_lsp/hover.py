"""Hover: schema descriptions on keys and values; a step's title and prompt on a reference to it;
a declared context variable's description and allowed values on a `var`, a `sets`/`reads` name
or a template reading it;
the producer of ``{{steps.x.output}}``; a plain-English reading of conditions; on a step's
``promptBlocks`` or ``templateCall``, the step as the compile step serves it to an agent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lsprotocol import types

from workrail_engine.compile import compile_workflow
from workrail_engine.diagnostics import Span
from workrail_engine.evaluation.conditions import describe
from workrail_engine.evaluation.templates import find_references
from workrail_engine.text.cursor import CursorContext

from .completion import instance_of
from .documents import DocumentState
from .schema_model import schema_model, value_at
from .workflow_facts import facts_of, variable_doc

__all__ = ["condition_text", "hover"]


Routines = Callable[[str], Mapping[str, Any] | None]


def hover(
    state: DocumentState, position: types.Position, routines: Routines | None = None
) -> types.Hover | None:
    if not state.is_workflow:
        return None
    offset = state.positions.offset(position)
    context = state.tree.cursor(offset)
    if context.token is None:
        return None
    text = _reference_text(state, context, offset) or _schema_text(state, context)
    served = _served_text(state, context, routines)
    if served:
        text = f"{text}\n\n{served}" if text else served
    if not text:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=state.positions.range(Span(*context.token)),
    )


def _schema_text(state: DocumentState, context: CursorContext) -> str | None:
    model = schema_model()
    key = context.token_value if context.in_key else context.key
    if context.container != "object" or not isinstance(key, str):
        return None
    parent = model.at_path(context.path, state.value, instance_of(context))
    schema = model.properties(parent).get(key)
    if schema is None:
        return None
    parts = [
        f"**{schema.get('title', key)}**",
        schema.get("markdownDescription") or schema.get("description") or "",
    ]
    if not context.in_key:
        parts.append(_enum_text(schema, context.token_value))
    own = model.at_path(context.path + (key,), state.value)
    condition = (
        condition_text(state.value, context.path + (key,)) if model.is_condition(own) else None
    )
    if condition is None and model.is_condition(parent):
        condition = condition_text(state.value, context.path)
    if condition:
        parts.append(condition)
    return "\n\n".join(p for p in parts if p)


def _served_text(state: DocumentState, context: CursorContext, routines: Routines | None) -> str:
    """The compiled form of the step whose ``promptBlocks`` / ``templateCall`` key is hovered."""
    if not context.in_key or context.token_value not in ("promptBlocks", "templateCall"):
        return ""
    step = value_at(state.value, context.path)
    if not isinstance(state.value, Mapping) or not isinstance(step, Mapping):
        return ""
    compiled = compile_workflow({**state.value, "steps": [step]}, routines or (lambda _name: None))
    if compiled.problems:
        return "**Not served:** " + "; ".join(f"{p.code} {p.message}" for p in compiled.problems)
    parts = ["**Served to the agent as:**"]
    for served in compiled.definition["steps"]:
        parts.append(_step_text(str(served.get("id")), served, "Step"))
    return "\n\n".join(parts)


def _enum_text(schema: Mapping[str, Any], value: Any) -> str:
    choices = schema.get("enum") or []
    descriptions = schema.get("enumDescriptions") or []
    if value in choices and choices.index(value) < len(descriptions):
        return f"`{value}`: {descriptions[choices.index(value)]}"
    return ""


def condition_text(value: Any, path: tuple[str | int, ...]) -> str | None:
    """A condition read in words; hover and inlay hints show the same text."""
    condition = value_at(value, path)
    if not isinstance(condition, Mapping):
        return None
    try:
        return f"Runs when: {describe(condition)}"
    except Exception:  # an incomplete condition has no reading yet
        return None


def _reference_text(state: DocumentState, context: CursorContext, offset: int) -> str | None:
    if context.in_key or not context.in_string or not isinstance(context.token_value, str):
        return None
    facts = facts_of(state.value)
    if context.key == "body" and context.token_value in facts.steps:
        return _step_text(context.token_value, facts.steps[context.token_value], "Loop body")
    if context.key == "var" or (
        context.container == "array" and context.path[-1:] in (("sets",), ("reads",))
    ):
        name = context.token_value.removeprefix("context.")
        if name in facts.declared:
            return variable_doc(name, facts.declared[name])
    assert context.token is not None
    body = context.token[0] + (1 if state.text[context.token[0]] in "\"'" else 0)
    raw = state.text[body : context.token[1]]
    inside = offset - body
    for ref in find_references(raw):
        if ref.span.start <= inside <= ref.span.end:
            return _template_text(ref.namespace, ref.path, facts)
    return None


def _template_text(namespace: str, path: tuple[str, ...], facts: Any) -> str | None:
    name = path[0] if path else ""
    if namespace == "steps" and name in facts.steps:
        return _step_text(name, facts.steps[name], f"Output of step `{name}`, produced by")
    if namespace == "parameters" and name in facts.parameters:
        schema = facts.parameters[name]
        return f"**Parameter `{name}`**\n\n{schema.get('description', '')}".strip()
    if namespace == "secrets":
        known = (
            "declared in `secrets`" if name in facts.secrets else "**not declared** in `secrets`"
        )
        return f"**Secret `{name}`**: read from the environment at run time, {known}; never stored, redacted from output."
    if namespace == "context" and name in facts.declared:
        return variable_doc(name, facts.declared[name])
    if namespace == "context":
        return f"**Context variable `{'.'.join(path)}`**: a value of the run's context."
    return None


def _step_text(step_id: str, step: Mapping[str, Any], lead: str) -> str:
    title = step.get("title") if isinstance(step.get("title"), str) else step_id
    lines = [f"{lead} **{title}** (`{step_id}`)"]
    if isinstance(step.get("prompt"), str):
        lines.append(step["prompt"])
    elif isinstance(step.get("run"), Mapping) and isinstance(step["run"].get("command"), list):
        lines.append("Runs `" + " ".join(str(a) for a in step["run"]["command"]) + "`")
    return "\n\n".join(lines)
