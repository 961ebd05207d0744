"""How much text the compile step may produce, charged before each piece is built.

The compile stages multiply text: a routine's ``{arg}`` placeholders times a long argument, a
binding token times its slot's default, a ref token times its snippet, a routine's steps times its
calls. A 30 KB routine with 10,000 placeholders and a 100 KB argument compiled to a 1 GB prompt.
Every stage therefore asks the budget *before* it builds a bigger text, from lengths it already
has (a substitution's growth is the sum of its replacements' lengths minus its tokens'), so an
oversized text is refused, never built to be measured. Sizes are characters of text: the strings
and keys of a step, one per other scalar.
"""

from __future__ import annotations

from typing import Any

from ..evaluation.problems import Problem
from ..limits import MAX_COMPILED_STEP_CHARS, MAX_COMPILED_WORKFLOW_CHARS
from ._sites import visit_steps

__all__ = ["CompileBudget", "text_size"]

_MEMBERS = ("body", "steps")


def text_size(value: Any, members: bool = True) -> int:
    """The characters of text in a JSON value; ``members=False`` leaves out a step's own
    ``body``/``steps`` lists (those steps are counted as steps of their own)."""
    total = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is str:
            total += len(node)
        elif isinstance(node, dict):
            for key, child in node.items():
                total += len(key) if type(key) is str else 1
                if members or key not in _MEMBERS or not isinstance(child, list):
                    stack.append(child)
        elif isinstance(node, list | tuple):
            stack.extend(node)
        else:
            total += 1
    return total


class CompileBudget:
    """The compiled size of each step and of the whole workflow, against their limits."""

    def __init__(
        self,
        problems: list[Problem],
        step_limit: int = MAX_COMPILED_STEP_CHARS,
        workflow_limit: int = MAX_COMPILED_WORKFLOW_CHARS,
    ) -> None:
        self._problems = problems
        self.step_limit = step_limit
        self.workflow_limit = workflow_limit
        # id(step) → (the step, its size); holding the step keeps its id from being reused
        self._sizes: dict[int, tuple[dict[str, Any], int]] = {}
        self._total = 0
        self._refused_steps: set[str] = set()
        self.full = False  # the workflow limit is reached: nothing more is added

    def count(self, steps: list[Any]) -> None:
        """Start from the steps as written (each step's own text, members apart)."""
        visit_steps(steps, lambda step, _pointer: self.adopt(step, text_size(step, False)))

    def adopt(self, step: dict[str, Any], size: int) -> None:
        """Count a step that is built (an injected one, already admitted by `admits`)."""
        known = self._sizes.get(id(step))
        self._total += size - (known[1] if known else 0)
        self._sizes[id(step)] = (step, size)

    def admits(self, size: int, where: str, step_id: Any) -> bool:
        """May a new step of ``size`` characters be added? Reports WR811 when not."""
        return self._fits(size, size, where, step_id)

    def grows(self, step: dict[str, Any], added: int, where: str) -> bool:
        """May ``step`` grow by ``added`` characters? Charged when yes; WR811 when not."""
        known = self._sizes.get(id(step))
        size = (known[1] if known else 0) + added
        if not self._fits(size, added, where, step.get("id")):
            return False
        self._total += added
        self._sizes[id(step)] = (step, size)
        return True

    def _fits(self, step_size: int, added: int, where: str, raw_id: Any) -> bool:
        # the id of a step that is being typed may be anything, and of any length
        step_id = raw_id[:80] if isinstance(raw_id, str) else "(no id)"
        if self.full:
            return False
        if step_size > self.step_limit:
            if step_id not in self._refused_steps:  # one report per step, however many texts
                self._refused_steps.add(step_id)
                self._problems.append(
                    Problem(
                        where,
                        "WR811",
                        f"Step {step_id!r} would compile to more than {self.step_limit:,} "
                        "characters: a routine argument, binding or ref expands too much to be "
                        "served.",
                    )
                )
            return False
        if self._total + added > self.workflow_limit:
            if not self.full:  # one report for the workflow: the first step that does not fit
                self.full = True
                self._problems.append(
                    Problem(
                        where,
                        "WR811",
                        f"The compiled workflow would hold more than {self.workflow_limit:,} "
                        f"characters of steps (at step {step_id!r}): routine calls, bindings or "
                        "refs expand too much to be served.",
                    )
                )
            return False
        return True
