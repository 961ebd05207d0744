"""Stage 5: ``promptBlocks`` rendered into the step's ``prompt``.

Sections in a fixed order, as upstream WorkRail renders them: ``## Goal`` (the text),
``## Constraints`` (``- `` bullets), ``## Procedure`` (numbered ``1. ``), ``## Output Required``
(``- **key**: description``) and ``## Verify`` (``- `` bullets), separated by blank lines; empty
sections are left out. A prompt value is a string or a list of parts joined without separators.
The compiled step has a ``prompt`` and no ``promptBlocks``. A step with both, or with blocks that
render to nothing, is a problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..evaluation.problems import Problem
from ._budget import CompileBudget
from ._sites import StepVisitor

__all__ = ["render_blocks", "renderer"]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(part.get("text", "")) for part in value if isinstance(part, Mapping))
    return ""


def _items(blocks: Mapping[str, Any], key: str) -> list[str]:
    values = blocks.get(key)
    return [_text(v) for v in values] if isinstance(values, list) else []


def render_blocks(blocks: Mapping[str, Any]) -> str:
    sections = []
    if "goal" in blocks:
        sections.append(f"## Goal\n{_text(blocks['goal'])}")
    constraints = _items(blocks, "constraints")
    if constraints:
        sections.append("## Constraints\n" + "\n".join(f"- {c}" for c in constraints))
    procedure = _items(blocks, "procedure")
    if procedure:
        sections.append(
            "## Procedure\n" + "\n".join(f"{i}. {p}" for i, p in enumerate(procedure, 1))
        )
    required = blocks.get("outputRequired")
    if isinstance(required, Mapping) and required:
        sections.append(
            "## Output Required\n"
            + "\n".join(f"- **{key}**: {value}" for key, value in required.items())
        )
    verify = _items(blocks, "verify")
    if verify:
        sections.append("## Verify\n" + "\n".join(f"- {v}" for v in verify))
    return "\n\n".join(sections)


def _layout_size(blocks: Mapping[str, Any]) -> int:
    """At least the characters rendering adds around the blocks' own text (headings, bullets,
    numbers, separators), counted before the prompt is built."""
    size = 100  # the five headings and the blank lines between them
    for key in ("constraints", "procedure", "verify"):
        items = blocks.get(key)
        if isinstance(items, list):
            size += len(items) * (len(str(len(items))) + 4)
    required = blocks.get("outputRequired")
    if isinstance(required, Mapping):
        size += len(required) * 10
    return size


def renderer(problems: list[Problem], budget: CompileBudget) -> StepVisitor:
    def render(step: dict[str, Any], pointer: str) -> None:
        blocks = step.get("promptBlocks")
        if not isinstance(blocks, Mapping):
            return
        if step.get("prompt"):
            problems.append(
                Problem(
                    pointer,
                    "WR810",
                    f"Step {step.get('id')!r} has both prompt and promptBlocks; write one of them.",
                )
            )
            return
        if not budget.grows(step, _layout_size(blocks), f"{pointer}/promptBlocks"):
            return
        text = render_blocks(blocks)
        if not text:
            problems.append(
                Problem(
                    f"{pointer}/promptBlocks",
                    "WR810",
                    f"The promptBlocks of step {step.get('id')!r} have no non-empty section.",
                )
            )
            return
        del step["promptBlocks"]
        step["prompt"] = text

    return render
