"""Every step a compile stage rewrites: top level, inline loop bodies, and parallel members."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["StepVisitor", "visit_steps"]

StepVisitor = Callable[[dict[str, Any], str], None]


def visit_steps(steps: list[Any], visit: StepVisitor, pointer: str = "/steps") -> None:
    """Call ``visit(step, pointer)`` on each step object, containers before their members.

    The pointer names the step in the file as written, kept in ``_origin`` by the templates
    stage (so that steps injected before it do not shift it); for steps injected by a template it
    is the calling step's pointer, where the author can do something about it.
    """
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        where = step.get("_origin") or f"{pointer}/{index}"
        visit(step, where)
        for key in ("body", "steps"):
            if isinstance(step.get(key), list):
                visit_steps(step[key], visit, f"{where}/{key}")
