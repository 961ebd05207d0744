"""Forking a run: a new run that keeps what an earlier run recorded before one of its steps, and
runs from that step on, its parameters and context changed as asked (docs/runs.md, "Fork").

The fork's walk starts from the top, as a replay after a crash does, and takes each kept step's
result as recorded (`KeptPrefix.results`: read from the journal rows copied from the parent, the
only rows copied) and the agent's recorded answer to each kept prompt step (its context changes
and artifacts), so no command runs again and nobody is asked again. Up to the fork point the walk
sees the values the parent saw (its parameters, its context), so its loops and conditions decide
as the parent's did; when it first reaches a step it does not keep, the new parameters and context
take over (`Switches`, from `fork_walk`). Replay walks a forked run with the same `fork_walk`, so
its conditions and loops decide on the values the fork's own walk decided them on.

A fork of a fork keeps its parent's switches that fall inside what it keeps (each is a number of
kept results, and what a fork keeps is always a prefix of its parent's results), so its walk
replays the parent's own change of parameters at the parent's fork point.

Secrets are never part of what is kept: a step reads them from the environment when it starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..definition.steps import walk_steps
from ..errors import InvalidParams

__all__ = [
    "FORKED_FROM",
    "ForkPoint",
    "ForkWalk",
    "KeptPrefix",
    "Switch",
    "Switches",
    "fork_point",
    "fork_walk",
    "forked_from_input",
    "kept_prefix",
    "lineage_links",
    "link_place",
]

FORKED_FROM = "forked_from"  # the key of a fork's run input that says what it keeps


@dataclass(frozen=True)
class Switch:
    """Values that take over when the walk first reaches a step outside the run's first ``kept``
    results: the parameters (all of them) and context variables (added or changed)."""

    kept: int
    parameters: dict[str, Any]
    context: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"kept": self.kept, "parameters": self.parameters, "context": self.context}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Switch:
        return cls(int(data["kept"]), dict(data["parameters"]), dict(data["context"]))


class Switches:
    """When a fork's walk takes new values: as it first reaches a step outside the run's first
    ``kept`` results, for each switch. The fork's own walk and replay's walk of a forked run both
    step through a fork's switches with this one object."""

    def __init__(self, kept_keys: Sequence[str], switches: Sequence[Switch]) -> None:
        self._position = {key: position for position, key in enumerate(kept_keys)}
        self._switches = sorted(switches, key=lambda s: s.kept)

    def reaching(self, key: str, values: dict[str, Any]) -> None:
        """The walk reaches the step ``key``: the switches due there (oldest first, each once)
        replace ``values``' parameters and add to its context."""
        position = self._position.get(key)
        while self._switches and (position is None or position >= self._switches[0].kept):
            switch = self._switches.pop(0)
            values["parameters"] = switch.parameters
            values["context"].update(switch.context)


@dataclass(frozen=True)
class ForkWalk:
    """How a fork's walk goes: the parameters it starts with (the first run's of its line, up to
    the first fork point) and the switches on the way."""

    parameters: dict[str, Any]
    switches: Switches


def fork_walk(forked_from: Mapping[str, Any], kept_keys: Sequence[str]) -> ForkWalk:
    """The walk of a fork whose ``forked_from`` input is given and whose first results (in the
    order they were recorded, at least its ``kept`` ones) have the step keys ``kept_keys``."""
    kept = list(kept_keys[: int(forked_from["kept"])])
    return ForkWalk(
        dict(forked_from["parameters"]),
        Switches(kept, [Switch.from_json(s) for s in forked_from["switches"]]),
    )


class KeptPrefix:
    """What a fork's walk keeps: its first results (by step key, in the order they were
    recorded) and the agent's answers to the kept prompt steps."""

    def __init__(
        self, results: Sequence[dict[str, Any]], answers: Mapping[str, Mapping[str, Any]]
    ) -> None:
        self.results = {str(r["step_name"]): r for r in results}
        self.answers = dict(answers)


@dataclass(frozen=True)
class ForkPoint:
    """Where a fork starts in its parent: the step key, and how many of the parent's results
    (in the order they were recorded) come before it."""

    step_key: str
    kept: int


def fork_point(
    results: Sequence[Mapping[str, Any]],
    waiting_key: str | None,
    step: str,
    workflow: Mapping[str, Any] | None = None,
) -> ForkPoint:
    """The fork point that ``step`` names in a run whose results are ``results``: a step key
    (``build``, ``test[2]``) or a step id (its first result); a parallel group's or a loop's id
    of ``workflow`` (``pair``, or ``pair[2]`` for its run in a loop's iteration 2): the first
    result among its steps — its first member to end, its first iteration — so that all of it
    runs again. A step the run waits on (no result yet) keeps every result. Unknown, or a group
    or loop none of whose steps ran: `InvalidParams` listing the step keys to choose from."""
    keys = [str(r["step_name"]) for r in results]
    if step in keys:
        return ForkPoint(step, keys.index(step))
    for position, result in enumerate(results):
        if result.get("step_id") == step:
            return ForkPoint(keys[position], position)
    if waiting_key is not None and step in (waiting_key, waiting_key.split("[", 1)[0]):
        return ForkPoint(waiting_key, len(keys))
    inside = _steps_inside(workflow, step) if workflow is not None else None
    if inside is not None:
        # a key of a step inside: that step's id, then the iterations of the loops around the
        # container (``suffix``), then those of the loops inside it
        ids, suffix, _ = inside

        def within(key: str) -> bool:
            step_id, bracket, rest = key.partition("[")
            return step_id in ids and (bracket + rest).startswith(suffix)

        for position, key in enumerate(keys):
            if within(key):
                return ForkPoint(key, position)
        if waiting_key is not None and within(waiting_key):
            return ForkPoint(waiting_key, len(keys))
    valid = list(dict.fromkeys([*keys, *([waiting_key] if waiting_key else [])]))
    raise InvalidParams(
        f"the run has no step {step!r} to fork from"
        + (
            f" ({step!r} is a {'loop' if inside[2] == 'loop' else 'parallel group'} none of"
            " whose steps has run)"
            if inside is not None
            else ""
        )
        + "; "
        + (
            f"its steps, in the order they ran: {', '.join(valid)}"
            if valid
            else "it has not reached any step yet"
        ),
        details="from_step",
        stepId=step,
        steps=valid,
    )


def _steps_inside(workflow: Mapping[str, Any], named: str) -> tuple[set[str], str, str] | None:
    """For ``named``, a parallel group's or loop's id (``pair``) or key (``pair[2]``) in
    ``workflow``: the ids of the steps inside it, the key's iterations (``[2]``; "" for an id)
    and its kind; None when it names no group or loop."""
    container_id, bracket, rest = named.partition("[")
    sites = list(walk_steps(workflow))
    container = next(
        (s for s in sites if s.id == container_id and s.kind in ("parallel", "loop")), None
    )
    if container is None:
        return None
    below = container.pointer + "/"
    ids = {s.id for s in sites if s.id is not None and s.pointer.startswith(below)}
    body = container.step.get("body")
    if isinstance(body, str):  # a loop whose body is another step, named by its id
        ids.add(body)
    return ids, bracket + rest, container.kind


def forked_from_input(
    parent_id: str,
    parent: Mapping[str, Any],
    point: ForkPoint,
    parameters: dict[str, Any],
    context: dict[str, Any],
    answers: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``forked_from`` part of a fork's run input: the parent and step, how many results it
    keeps, the values its walk starts with and the switches on the way (the parent's, when the
    parent is a fork itself, then this fork's own: ``parameters``, the ``context`` changes)."""
    inherited = parent.get(FORKED_FROM)
    if inherited:
        start = inherited["parameters"]
        switches = [
            Switch.from_json(s) for s in inherited["switches"] if int(s["kept"]) <= point.kept
        ]
    else:
        start, switches = parent.get("parameters") or {}, []
    switches.append(Switch(point.kept, parameters, context))
    return {
        "run_id": parent_id,
        "step": point.step_key,
        "kept": point.kept,
        "parameters": start,
        "switches": [s.to_json() for s in switches],
        "answers": dict(answers),
    }


def kept_prefix(forked_from: Mapping[str, Any], kept: Sequence[dict[str, Any]]) -> KeptPrefix:
    """The walk's view of a fork's ``forked_from`` input, with the results its journal kept."""
    return KeptPrefix(kept, forked_from.get("answers") or {})


def lineage_links(record: Mapping[str, Any]) -> dict[str, Any]:
    """Where a run or a session was forked from, and its forks, in one shape for every page:
    links ``{run_id, step_id, step_attempt}`` (a session's forks also ``created_at``). A session
    branches at an attempt of a step; a run forks at a step key (``tick[2]``), its attempt None.
    ``record``: a run as `RunService.get`/`RunHistory.run` give it (``forked_from``/``forks``),
    a session's part of it (its links already in this shape), or a view holding ``lineage``."""
    if "lineage" in record:
        return dict(record["lineage"])

    def link(fork: Mapping[str, Any]) -> dict[str, Any]:
        if "step_attempt" in fork:
            return dict(fork)
        return {"run_id": fork["run_id"], "step_id": fork["step"], "step_attempt": None}

    parent = record.get("forked_from")
    return {
        "forked_from": link(parent) if parent else None,
        "forks": [link(fork) for fork in record.get("forks") or []],
    }


def link_place(link: Mapping[str, Any]) -> str:
    """Where a link of `lineage_links` forked, in words: a run's step key (``right[2]``), a
    session's step and its attempt (``step 'draft' (attempt 1)``)."""
    if link["step_attempt"] is not None:
        return f"step {link['step_id']!r} (attempt {link['step_attempt']})"
    return str(link["step_id"])
