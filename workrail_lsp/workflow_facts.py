"""Names a workflow defines or uses, for completion and hover: steps, parameters, secrets, context.

Computed from the parsed value (the last one that parsed while the text is broken) and
remembered per value object, so typing in a broken document does not recompute them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workrail_engine.definition.declared import (
    declared_context,
    declared_parameters,
    declared_secrets,
)
from workrail_engine.definition.steps import walk_steps
from workrail_engine.evaluation.templates import find_references

__all__ = ["WorkflowFacts", "allowed_values", "facts_of", "variable_doc"]


@dataclass
class WorkflowFacts:
    steps: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # id → step, document order
    step_pointers: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    context_vars: list[str] = field(default_factory=list)  # the declared ones first
    declared: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # the `context` key


_last: tuple[int, Any, WorkflowFacts] | None = None


def facts_of(value: Any) -> WorkflowFacts:
    global _last
    if _last is not None and _last[0] == id(value) and _last[1] is value:
        return _last[2]
    facts = _compute(value)
    _last = (id(value), value, facts)
    return facts


def _compute(value: Any) -> WorkflowFacts:
    facts = WorkflowFacts()
    if not isinstance(value, Mapping):
        return facts
    for site in walk_steps(value):
        if site.id is not None and site.id not in facts.steps:
            facts.steps[site.id] = site.step
            facts.step_pointers[site.id] = site.pointer
    facts.parameters = dict(declared_parameters(value))
    facts.secrets = declared_secrets(value)
    facts.declared = declared_context(value) or {}
    seen: dict[str, None] = dict.fromkeys(facts.declared)
    _collect_context(value, seen)
    facts.context_vars = list(seen)
    return facts


_LOOP_VARS = ("iterationVar", "itemVar", "indexVar")


def _collect_context(node: Any, seen: dict[str, None]) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Mapping):
            for key, item in current.items():
                if key == "var" and isinstance(item, str):
                    seen.setdefault(item, None)
                elif key in _LOOP_VARS and isinstance(item, str):
                    seen.setdefault(item, None)
                elif isinstance(item, str) and "{{" in item:
                    _context_refs(item, seen)
                else:
                    stack.append(item)
        elif isinstance(current, list):
            for item in current:
                if isinstance(item, str) and "{{" in item:
                    _context_refs(item, seen)
                else:
                    stack.append(item)


def _context_refs(text: str, seen: dict[str, None]) -> None:
    for ref in find_references(text):
        if ref.namespace == "context" and ref.path:
            seen.setdefault(".".join(ref.path), None)


def allowed_values(schema: Mapping[str, Any]) -> list[Any]:
    """The values a declared variable's ``enum`` allows (none when it has no enum)."""
    enum = schema.get("enum")
    return list(enum) if isinstance(enum, list) else []


def variable_doc(name: str, schema: Mapping[str, Any]) -> str:
    """A declared context variable in words, for completion and hover alike."""
    parts = [f"**Context variable `{name}`** (declared in `context`)"]
    description = schema.get("description")
    if isinstance(description, str) and description.strip():
        parts.append(description.strip())
    values = allowed_values(schema)
    if values:
        shown = ", ".join(f"`{json.dumps(v, ensure_ascii=False)}`" for v in values)
        parts.append(f"Allowed values: {shown}")
    elif isinstance(schema.get("type"), str):
        parts.append(f"Type: `{schema['type']}`")
    return "\n\n".join(parts)
