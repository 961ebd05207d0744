"""A recorded history as replay reads it: where a session or a run started, each step it took in
order with what it was answered or what its command returned, and where it ended.

The same shape is read from the run store (`records`) and from exported fixture files
(`fixtures`), so a history replays the same way from either. ``lacks`` names what a history
recorded before the record kept it does not hold; replay goes as far as it can without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..runs.fork import fork_walk, lineage_links

__all__ = ["FIXTURE_VERSION", "History", "RecordedStep", "Stopped"]

FIXTURE_VERSION = 1  # of an exported history's shape (`History.to_dict`)


@dataclass
class RecordedStep:
    """One step as recorded, in the order it happened.

    ``key``: a session's step attempt ("1", "2"…) or a run's step key (``ID``, ``ID[2]`` in a
    loop). ``status``: answered | success | failed | skipped | interrupted | cancelled.
    ``answer``: what the agent (or a model) sent — ``{output, artifacts, context}``, masked —
    for a step answered; ``attempts``: a command step's attempt outcomes, by attempt number;
    ``result``: a run step's result as the walk recorded it."""

    key: str
    step_id: str
    status: str
    answer: dict[str, Any] | None = None
    attempts: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    loop: dict[str, Any] | None = None  # a session's loop position when the step was served


@dataclass(frozen=True)
class Stopped:
    """Where replay had to end a history before its end, for want of what it did not record:
    at ``at`` (a step key, as a divergence names it), step ``step_id``; ``lack``: what is missing,
    as `records.LACKS` words it."""

    at: str
    step_id: str
    lack: str

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "stepId": self.step_id, "lack": self.lack}


@dataclass
class History:
    """``kind`` session | run; ``start``: ``context`` (and a run's ``parameters``; a forked
    run's ``fork``: its ``kept`` results, the ``parameters`` its walk starts with and its
    ``switches``, as `runs.fork.fork_walk` reads them); ``end``: ``status`` and, when it stopped
    at a step, ``pending`` (its key) and ``pending_step``; ``forked_from``: the run or session
    it was forked from and where, a link of `runs.fork.lineage_links` (None: not a fork)."""

    kind: str
    id: str
    workflow_id: str
    workflow_hash: str | None
    start: dict[str, Any]
    steps: list[RecordedStep]
    end: dict[str, Any]
    lacks: list[str] = field(default_factory=list)
    forked_from: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        """Whether the history ran to its end (so a walk that goes on now diverges)."""
        return self.end.get("status") in ("success", "failed", "partial")

    def to_dict(self) -> dict[str, Any]:
        return {"fixture": FIXTURE_VERSION, **asdict(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> History:
        """A history from its exported shape; ValueError (saying which field) when it is not one."""
        if not isinstance(data, Mapping) or data.get("fixture") != FIXTURE_VERSION:
            raise ValueError(f"not a replay fixture of version {FIXTURE_VERSION}")
        try:
            steps = [RecordedStep(**step) for step in data["steps"]]
            fork = data["start"].get("fork")
            if fork is not None:
                fork_walk(fork, [])  # read as the walk reads it: each part there, of its type
            return cls(
                kind=str(data["kind"]),
                id=str(data["id"]),
                workflow_id=str(data["workflow_id"]),
                workflow_hash=data.get("workflow_hash"),
                start=dict(data["start"]),
                steps=steps,
                end=dict(data["end"]),
                lacks=list(data.get("lacks") or []),
                forked_from=_link(data.get("forked_from")),
            )
        except (KeyError, TypeError) as error:
            raise ValueError(
                f"a replay fixture's field is missing or malformed: {error}"
            ) from error


def _link(data: Any) -> dict[str, Any] | None:
    """A fixture's ``forked_from`` as `lineage_links` shapes a link (absent in fixtures exported
    before it was kept)."""
    if data is None:
        return None
    link: dict[str, Any] = lineage_links({"forked_from": dict(data)})["forked_from"]
    return link
