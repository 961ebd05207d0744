"""`workrail next`: the stateless next step of a workflow, as `workflow_next` computes it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workrail_engine.cli.console import Console

if TYPE_CHECKING:
    from workrail_engine.catalog import Catalog

__all__ = ["parse_completed", "parse_context", "render_next", "run_next"]


def parse_completed(values: Iterable[str]) -> list[str]:
    """``--completed a,b --completed c`` → ``["a", "b", "c"]`` (blanks dropped)."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def parse_context(items: Iterable[str]) -> dict[str, Any]:
    """``key=value`` pairs → a context dict; values are JSON when they parse, dotted keys nest."""
    context: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected KEY=VALUE, got {item!r}")
        *parents, leaf = key.strip().split(".")
        target = context
        for part in parents:
            child = target.setdefault(part, {})
            if not isinstance(child, dict):
                raise ValueError(f"{key!r}: {part!r} is already set to a non-object value")
            target = child
        target[leaf] = _json_or_text(raw)
    return context


def run_next(
    catalog: Catalog,
    workflow_id: str,
    completed: Sequence[str],
    context: Mapping[str, Any],
    *,
    current_step: str | None,
    fmt: str,
    console: Console,
) -> int:
    from workrail_engine.navigator import next_step

    entry = catalog.get(workflow_id)
    result = next_step(entry.definition, completed, context, current_step=current_step)
    payload = result.to_dict()
    if fmt == "json":
        console.out(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    else:
        console.out(render_next(payload))
    return 0


def _field(label: str, value: Any) -> list[str]:
    if value in (None, "", [], {}):
        return []
    if isinstance(value, bool):
        value = "yes" if value else "no"
    if isinstance(value, list):
        return [f"{label}:", *(f"  - {item}" for item in value)]
    return [f"{label}: {value}"]


def render_next(payload: Mapping[str, Any]) -> str:
    """The step's title and id, the guidance prompt, then hints and checks in plain words."""
    step = payload.get("step")
    if payload.get("isComplete") or step is None:
        return "Workflow complete: no steps left."
    guidance = payload.get("guidance") or {}
    title = step.get("title") or step.get("id")
    lines = [f"Next step: {step.get('id')} — {title}", ""]
    prompt = guidance.get("prompt") or step.get("prompt")
    if prompt:
        lines += [str(prompt), ""]
    lines += _field("Model hint", guidance.get("modelHint"))
    lines += _field("Requires confirmation", guidance.get("requiresConfirmation"))
    lines += _field("Validation criteria", guidance.get("validationCriteria"))
    return "\n".join(lines).rstrip()
