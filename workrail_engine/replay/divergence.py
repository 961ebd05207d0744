"""The first place a recorded history and the workflow as it is now part ways, and the construct
of the file that makes them part: one rule for sessions and runs.

Kinds: ``step`` (another step is served), ``blocked`` (the recorded answer would now be
blocked), ``gone`` (the recorded step's id is gone or renamed), ``loop`` (a loop now stops
sooner or later). Each names a construct — a step id and the member of that step to point at —
which `construct_pointer` places in the workflow's source document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..definition.steps import walk_steps

__all__ = ["Divergence", "Shape", "blocked", "construct_pointer", "diverged", "skip_changed"]


@dataclass(frozen=True)
class Divergence:
    kind: str  # step | blocked | gone | loop
    at: str  # the recorded step key where it happened ("attempt 3", "step key check[2]")
    message: str
    step_id: str | None  # the step whose member caused it (None: the workflow's steps)
    member: str | None  # runCondition | validationCriteria | loop | id | … (None: the step)
    recorded: str | None  # the step the history took there (None: it ended)
    served: str | None  # the step the workflow serves there now (None: it ends)
    iteration: int | None = None  # the loop iteration the history had reached (a loop's)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "at": self.at,
            "message": self.message,
            "stepId": self.step_id,
            "member": self.member,
            "recorded": self.recorded,
            "served": self.served,
            "iteration": self.iteration,
        }


class Shape:
    """What of a workflow's structure the classification reads: each step by id, and the loop
    each loop-body step belongs to."""

    def __init__(self, definition: Mapping[str, Any]) -> None:
        self.steps: dict[str, Mapping[str, Any]] = {}
        self.loop_of: dict[str, str] = {}
        loops_by_pointer: dict[str, str] = {}
        for site in walk_steps(definition):
            if site.id is None:
                continue
            self.steps[site.id] = site.step
            if site.kind == "loop":
                loops_by_pointer[site.pointer] = site.id
                if isinstance(site.step.get("body"), str):
                    self.loop_of[site.step["body"]] = site.id
            elif site.loop is not None and site.loop in loops_by_pointer:
                self.loop_of[site.id] = loops_by_pointer[site.loop]


def _where(step_id: str | None) -> str:
    return f"step {step_id!r}" if step_id is not None else "the end"


def diverged(
    shape: Shape,
    at: str,
    recorded: str | None,
    served: str | None,
    iteration: int | None = None,
) -> Divergence:
    """The divergence where the history took ``recorded`` (None: it ended there) and the
    workflow now serves ``served`` (None: it ends there), classified and blamed; ``iteration``:
    the iteration of its loop the history was in at ``recorded``."""
    if recorded is not None and recorded not in shape.steps:
        instead = f"; {_where(served)} is served in its place (renamed?)" if served else ""
        return Divergence(
            "gone",
            at,
            f"step {recorded!r} of the recorded history ({at}) is gone from the workflow{instead}",
            served,
            "id" if served else None,
            recorded,
            served,
        )
    recorded_loop = shape.loop_of.get(recorded or "")
    served_loop = shape.loop_of.get(served or "")
    if recorded_loop != served_loop:
        if recorded_loop is not None:
            message = (
                f"loop {recorded_loop!r} now stops sooner: the history went on in it to "
                f"{_where(recorded)} ({at}); now {_where(served)} comes instead"
            )
            loop = recorded_loop
        else:
            assert served_loop is not None
            message = (
                f"loop {served_loop!r} now runs longer: {_where(served)} in it is served again "
                f"where the history went on to {_where(recorded)} ({at})"
            )
            loop = served_loop
        return Divergence("loop", at, message, loop, "loop", recorded, served, iteration)
    step_id, member, why = _blame(shape, recorded, served)
    message = (
        f"another step is served at {at}: {_where(served)} where the history has "
        f"{_where(recorded)} ({why})"
    )
    return Divergence("step", at, message, step_id, member, recorded, served)


def _blame(
    shape: Shape, recorded: str | None, served: str | None
) -> tuple[str | None, str | None, str]:
    if served is not None and "runCondition" in shape.steps[served]:
        return served, "runCondition", f"the runCondition of {served!r} now holds"
    if recorded is not None and "runCondition" in shape.steps[recorded]:
        return recorded, "runCondition", f"the runCondition of {recorded!r} no longer holds"
    if served is not None:
        return served, None, f"{served!r} was added or moved"
    return recorded, None, f"the steps after {recorded!r} are no longer reached"


def skip_changed(shape: Shape, at: str, step_id: str, skipped_now: bool) -> Divergence:
    """A step the history ran is skipped now, or the other way round."""
    member = "runCondition" if "runCondition" in shape.steps.get(step_id, {}) else None
    if skipped_now:
        message = f"step {step_id!r} ({at}) is skipped now: its runCondition no longer holds"
    else:
        message = f"step {step_id!r} ({at}) runs now where the history skipped it"
    return Divergence(
        "step", at, message, step_id, member, step_id, None if skipped_now else step_id
    )


def blocked(at: str, step_id: str, issues: list[str], what: str = "answer") -> Divergence:
    """The recorded ``what`` (an agent's answer, a command's output) of ``step_id`` fails the
    step's checks as they are now."""
    return Divergence(
        "blocked",
        at,
        f"the {what} recorded for step {step_id!r} ({at}) would now be blocked: "
        + "; ".join(issues),
        step_id,
        "validationCriteria",
        step_id,
        step_id,
    )


# The setting that decides how many iterations a loop of each type runs (before its limit).
_DECIDES = {"while": "condition", "until": "condition", "for": "count", "forEach": "items"}


def _loop_setting(settings: Mapping[str, Any], divergence: Divergence) -> str:
    """``/maxIterations`` when the loop now stops at its limit before the iteration the history
    reached; else the setting its type decides by, when it has one."""
    limit = settings.get("maxIterations")
    reached = divergence.iteration
    if isinstance(limit, int) and reached is not None and limit < reached:
        return "/maxIterations"
    key = _DECIDES.get(str(settings.get("type")))
    return f"/{key}" if key in settings else ""


def construct_pointer(sites: Any, divergence: Divergence) -> str:
    """The JSON pointer, in a workflow file's own value, of what caused ``divergence``: the
    step's member when the step has it (a loop's ``loop`` settings: its condition first), else
    the step; ``/steps`` when the step is not in the file as written (made by a template)."""
    for site in walk_steps(sites):
        if site.id != divergence.step_id or divergence.step_id is None:
            continue
        member = divergence.member
        if member == "loop" and isinstance(site.step.get("loop"), Mapping):
            return f"{site.pointer}/loop" + _loop_setting(site.step["loop"], divergence)
        if member == "validationCriteria":
            for key in ("validationCriteria", "outputContract", "assessmentRefs"):
                if key in site.step:
                    return f"{site.pointer}/{key}"
        if member is not None and member in site.step:
            return f"{site.pointer}/{member}"
        return site.pointer
    return "/steps"
