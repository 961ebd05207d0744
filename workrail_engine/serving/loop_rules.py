"""The rules of a loop step, one copy for the stateless next step and for a run's walk.

What a loop is (``while``, ``until``, ``for``, ``forEach``), how often it may run
(``maxIterations``), where its ``count`` and ``items`` come from (a string names a context
variable, read again at each iteration) and what a missing or ill-typed one means (a coded error:
the navigator raises it, a run fails with its message), whether it runs (again) after N
iterations, and the variables it sets. `serving.navigator` and `runs.walker` keep only how each
walks: the navigator its bookkeeping carried in the agent's context, the walker its iteration keys
and effects. The rules, for agents and authors, are in docs/navigation.md ("Loops").
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from ..errors import InvalidParams, InvalidRunState, InvalidWorkflow
from ..evaluation.conditions import MISSING, evaluate, resolve
from ..evaluation.contracts import loop_decision
from .loop_source import artifact_source, loop_condition

__all__ = ["DEFAULT_MAX_ITERATIONS", "LOOP_KINDS", "LoopRules"]

DEFAULT_MAX_ITERATIONS = 100
LOOP_KINDS = ("while", "until", "for", "forEach")
_VARIABLES = ("iterationVar", "indexVar", "itemVar")


class LoopRules:
    """The rules of one loop step, read from its definition once (a walk asks them at every
    iteration). ``values`` is what a count, items and a condition are read from: the agent's
    context for the navigator, parameters and context by bare name for a run."""

    __slots__ = ("by_artifact", "condition", "id", "kind", "limit", "variables", "_count", "_items")

    def __init__(self, step: Mapping[str, Any]) -> None:
        self.id: str = step["id"]
        spec = step.get("loop")
        if not isinstance(spec, Mapping) or spec.get("type") not in LOOP_KINDS:
            raise InvalidWorkflow(
                f"Loop {self.id!r} needs loop.type while, until, for or forEach", stepId=self.id
            )
        limit = spec.get("maxIterations", DEFAULT_MAX_ITERATIONS)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidWorkflow(
                f"Loop {self.id!r}: maxIterations must be a positive integer, got {limit!r}",
                stepId=self.id,
            )
        self.kind: str = spec["type"]
        self.limit: int = limit
        self.by_artifact = artifact_source(spec)
        self.condition = loop_condition(spec)
        # (which variable, its name in the context): iterationVar, indexVar, itemVar as set
        self.variables = tuple(
            (key, spec[key]) for key in _VARIABLES if isinstance(spec.get(key), str)
        )
        self._count = spec.get("count")
        self._items = spec.get("items")

    # --- what a for/forEach loop iterates over ------------------------------------------

    def total(self, values: Mapping[str, Any]) -> int | None:
        """Iterations a for/forEach loop wants (before maxIterations); None for while/until."""
        if self.kind == "for":
            return self.count(values)
        if self.kind == "forEach":
            return len(self.items(values))
        return None

    def count(self, values: Mapping[str, Any]) -> int:
        count = self._from_context(self._count, "count", values)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidRunState(
                f"Loop {self.id!r}: count must be a non-negative integer, got {count!r}",
                loopId=self.id,
            )
        return count

    def items(self, values: Mapping[str, Any]) -> list[Any]:
        items = self._from_context(self._items, "items", values)
        if not isinstance(items, list):
            raise InvalidRunState(
                f"Loop {self.id!r}: items must be an array, got {_kind(items)}", loopId=self.id
            )
        return items

    def item(self, iteration: int, values: Mapping[str, Any]) -> Any:
        """The element of a forEach loop's items that iteration ``iteration`` (1-based) is for."""
        items = self.items(values)
        if iteration > len(items):
            raise InvalidRunState(
                f"Loop {self.id!r}: items shrank to {len(items)} during iteration {iteration}",
                loopId=self.id,
            )
        return items[iteration - 1]

    def _from_context(self, value: Any, name: str, values: Mapping[str, Any]) -> Any:
        if not isinstance(value, str):
            return value
        found = resolve(values, value)
        if found is MISSING:
            raise InvalidRunState(
                f"Loop {self.id!r} takes its {name} from context variable {value!r}, which is not set",
                loopId=self.id,
                variable=value,
            )
        return found

    # --- whether it runs --------------------------------------------------------------

    def continues(
        self,
        done: int,
        values: Mapping[str, Any],
        artifacts: Sequence[Any] | None,
        notes: list[str] | None,
    ) -> bool:
        """Whether iteration ``done + 1`` runs once ``done`` iterations are over (0: whether the
        loop starts at all). ``artifacts``: what the step that ended iteration ``done`` handed
        over, read by a loop the agent decides. Reaching maxIterations ends the loop, with a note
        when it would have gone on; on that last pass the agent's decision no longer matters."""
        if self.by_artifact:
            # Before the first pass, only a "stop" handed over with the step just answered
            # keeps the loop from starting (as upstream reads it); no decision enters it.
            if done == 0:
                wanted = loop_decision(artifacts or []) != "stop"
            else:
                wanted = self._decision(artifacts, done < self.limit) == "continue"
        elif self.kind == "while":
            wanted = self._holds(values, notes)
        elif self.kind == "until":
            wanted = done == 0 or not self._holds(values, notes)
        else:
            wanted = done < (self.total(values) or 0)
        if wanted and done >= self.limit:
            if notes is not None:
                notes.append(
                    f"Loop {self.id!r} stopped after maxIterations ({self.limit}) iterations."
                )
            return False
        return wanted

    def _holds(self, values: Mapping[str, Any], notes: list[str] | None) -> bool:
        try:
            return evaluate(self.condition, values, notes)
        except ValueError as error:
            raise InvalidWorkflow(
                f"The loop condition of step {self.id!r} is invalid: {error}", stepId=self.id
            ) from error

    def _decision(self, artifacts: Sequence[Any] | None, required: bool) -> str | None:
        decision = loop_decision(artifacts or [])
        if decision is None and required:
            raise InvalidParams(
                f"Loop {self.id!r} decides whether to run again from a loop-control artifact: "
                'hand over {"kind": "wr.loop_control", "decision": "continue" | "stop"} with the '
                "step that ends the iteration",
                loopId=self.id,
            )
        return decision

    # --- the variables it sets ----------------------------------------------------------

    def set_variables(
        self, context: MutableMapping[str, Any], iteration: int, item: Any = None
    ) -> None:
        """``iterationVar`` = iteration (1-based), ``indexVar`` = iteration − 1, and for a forEach
        loop ``itemVar`` = ``item``, under the names the loop gives them."""
        for key, name in self.variables:
            if key == "iterationVar":
                context[name] = iteration
            elif key == "indexVar":
                context[name] = iteration - 1
            elif self.kind == "forEach":
                context[name] = item

    def clear_variables(self, context: MutableMapping[str, Any]) -> None:
        for _, name in self.variables:
            context.pop(name, None)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
