"""`workrail next`: the stateless next step of a workflow, as `workflow_next` computes it."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workrail_engine.cli.console import Console
from workrail_engine.limits import NestingTooDeep, parse_json_within_nesting

if TYPE_CHECKING:
    from workrail_engine.catalog import Catalog

__all__ = [
    "context_arguments",
    "next_command",
    "parse_completed",
    "parse_context",
    "render_next",
    "run_next",
]


def parse_completed(values: Iterable[str]) -> list[str]:
    """``--completed a,b --completed c`` → ``["a", "b", "c"]`` (blanks dropped)."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def json_or_text(raw: str) -> Any:
    """A command-line value: JSON when it parses, else the text itself.

    JSON nested deeper than the engine's limit is refused (ValueError), as it is from any client.
    """
    try:
        return parse_json_within_nesting(raw)
    except NestingTooDeep:
        raise
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
        target[leaf] = json_or_text(raw)
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
    options: Sequence[str] = (),
) -> int:
    """Print the next step; ``options`` (``--project DIR`` …) are repeated in the command to run next."""
    from workrail_engine.serving.navigator import next_step

    result = next_step(catalog.served(workflow_id), completed, context, current_step=current_step)
    payload = result.to_dict()
    if fmt == "json":
        console.out(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
        return 0
    follow_up = None
    action = payload.get("nextAction")
    if action:  # the engine's next action, as the command line to run
        follow_up = next_command(
            workflow_id, [*completed, action["complete"]], payload.get("context") or {}, options
        )
    console.out(render_next(payload, follow_up))
    return 0


def _field(label: str, value: Any) -> list[str]:
    if value in (None, "", [], {}):
        return []
    if isinstance(value, bool):
        value = "yes" if value else "no"
    if isinstance(value, list):
        return [f"{label}:", *(f"  - {item}" for item in value)]
    return [f"{label}: {value}"]


def _loop_line(loop: Mapping[str, Any] | None) -> list[str]:
    if not loop:
        return []
    limit = f" of at most {loop['maxIterations']}" if loop.get("maxIterations") else ""
    return [f"Loop: {loop.get('id')}, iteration {loop.get('iteration')}{limit}"]


def _parses_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _as_argument(value: Any) -> str:
    # A string that would not parse as JSON is passed as itself (taskId=TASK-1, not '"TASK-1"').
    if isinstance(value, str) and not _parses_as_json(value):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def context_arguments(context: Mapping[str, Any]) -> str:
    """The context as `--context` options for the next call (the loop bookkeeping included)."""
    return " ".join(
        "--context " + shlex.quote(f"{key}={_as_argument(value)}") for key, value in context.items()
    )


def next_command(
    workflow_id: str,
    completed: Sequence[str],
    context: Mapping[str, Any],
    options: Sequence[str] = (),
) -> str:
    """`workrail next …` for once the current step is done, quoted for a POSIX shell."""
    argv = ["workrail", "next", workflow_id, *options]
    if completed:
        argv += ["--completed", ",".join(completed)]
    return " ".join(filter(None, [shlex.join(argv), context_arguments(context)]))


def render_next(payload: Mapping[str, Any], follow_up: str | None = None) -> str:
    """The step's id and title, the guidance prompt, hints, then ``follow_up``: the command to run next."""
    step = payload.get("step")
    if payload.get("isComplete") or step is None:
        return "Workflow complete: no steps left."
    guidance = payload.get("guidance") or {}
    lines = [f"Next step: {step.get('id')} — {step.get('title') or step.get('id')}", ""]
    prompt = str(guidance.get("prompt") or step.get("prompt") or "")
    if prompt:
        lines += [prompt, ""]
    lines += _field("Skipped (their runCondition does not hold)", payload.get("skipped"))
    lines += _loop_line(payload.get("loop"))
    lines += _field("Model hint", guidance.get("modelHint"))
    if guidance.get("requiresConfirmation"):
        lines.append("Requires confirmation: yes")
    # The engine's prompt usually spells the criteria out already; repeat only what it does not.
    criteria = [c for c in guidance.get("validationCriteria") or [] if str(c) not in prompt]
    lines += _field("Validation criteria", criteria)
    lines += _field("Notes", payload.get("notes"))
    if follow_up:
        outputs = (payload.get("nextAction") or {}).get("outputTo") or []
        with_output = "".join(f" with --context {path}=… (your output)" for path in outputs)
        reason = " (a later step reads it)" if outputs else ""
        lines += ["", f"When this step is done, run{reason}{with_output}:", f"Next: {follow_up}"]
    return "\n".join(lines).rstrip()
