"""The shape of a workflow's steps: which kind a step is and where every step sits.

A step's kind is its ``type``; without one, a step with ``run`` is a command step and any other a
prompt step. ``walk_steps`` visits every step — inside parallel groups and inline loop bodies
too — with its JSON pointer, and tolerates malformed input (the schema reports that).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import StepNotFound

__all__ = [
    "StepSite",
    "executable_steps",
    "find_step",
    "step_ids",
    "step_kind",
    "walk_steps",
]


def step_kind(step: Mapping[str, Any]) -> str:
    kind = step.get("type")
    if isinstance(kind, str) and kind in ("prompt", "command", "parallel", "loop"):
        return kind
    return "command" if "run" in step else "prompt"


# Not frozen=True, though never changed: a frozen dataclass's __init__ costs ~5× as much, and an
# editor walks a 2,800-step workflow on every keystroke.
@dataclass(slots=True)
class StepSite:
    """A step of a workflow, where it sits and what encloses it."""

    step: Mapping[str, Any]
    pointer: str  # "/steps/2/steps/0"
    order: int  # position in a depth-first walk in document order
    top_index: int  # index of the top-level step this one is part of
    group: str | None  # pointer of the enclosing parallel group
    loop: str | None  # pointer of the enclosing loop (inline body)
    id: str | None  # the step's id when it is a string
    kind: str  # step_kind(step), read by several checks per step


def walk_steps(workflow: Any) -> Iterator[StepSite]:
    steps = workflow.get("steps") if isinstance(workflow, Mapping) else None
    if not isinstance(steps, list):
        return iter(())
    sites: list[StepSite] = []
    for index, step in enumerate(steps):
        _walk(step, f"/steps/{index}", index, None, None, sites)
    return iter(sites)


def _walk(
    step: Any, pointer: str, top: int, group: str | None, loop: str | None, sites: list[StepSite]
) -> None:
    # Plain recursion into a list: a 2,800-step workflow is walked on every keystroke in an editor.
    if not isinstance(step, dict):
        return
    step_id = step.get("id")
    kind = step_kind(step)
    sites.append(
        StepSite(
            step,
            pointer,
            len(sites),
            top,
            group,
            loop,
            step_id if isinstance(step_id, str) else None,
            kind,
        )
    )
    if kind == "parallel" and isinstance(step.get("steps"), list):
        for index, child in enumerate(step["steps"]):
            _walk(child, f"{pointer}/steps/{index}", top, pointer, loop, sites)
    elif kind == "loop" and isinstance(step.get("body"), list):
        for index, child in enumerate(step["body"]):
            _walk(child, f"{pointer}/body/{index}", top, group, pointer, sites)


def step_ids(workflow: Any) -> list[str]:
    return [site.id for site in walk_steps(workflow) if site.id]


def find_step(workflow: Any, step_id: str, workflow_id: str | None = None) -> Mapping[str, Any]:
    """The step with that id anywhere in the workflow (groups and inline loop bodies too);
    raises `StepNotFound` naming the closest ids."""
    ids = []
    for site in walk_steps(workflow):
        if site.id == step_id:
            return site.step
        if site.id:
            ids.append(site.id)
    if workflow_id is None and isinstance(workflow, Mapping):
        workflow_id = workflow.get("id") if isinstance(workflow.get("id"), str) else None
    raise StepNotFound(step_id, ids, workflow_id=workflow_id)


def executable_steps(workflow: Mapping[str, Any]) -> list[str]:
    """Ids of the steps that do work (prompt and command), in document order, each once."""
    ids: dict[str, None] = {}  # insertion-ordered and a set: a list's `in` made this quadratic

    def visit(steps: Iterable[Any]) -> None:
        for step in steps:
            if not isinstance(step, Mapping):
                continue
            kind = step_kind(step)
            if kind == "parallel" and "parallelDelegations" not in step:
                visit(step.get("steps") or [])
            elif kind == "loop":
                if isinstance(step.get("body"), list):
                    visit(step["body"])
            elif isinstance(step.get("id"), str):
                ids.setdefault(step["id"], None)

    visit(workflow.get("steps") or [])
    return list(ids)
