"""Replay: recorded sessions and runs walked again against their workflows as they are now.

Replay executes nothing — no command, no model, no person: it evaluates the engine's own
navigation (conditions, loops, output checks) on what was recorded, and reports for each
history the first divergence and the construct of the file that causes it.

- `records.read_histories`: the histories of a run store (read-only);
- `fixtures`: histories exported as small JSON files, and read back;
- `replay_history`: one history against one compiled workflow;
- `report.replay_reports`: the divergences as diagnostics of the workflow files, for the same
  formatters as `workrail validate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..definition.content_hash import workflow_hash
from ..result_shapes import link_json
from .divergence import Divergence
from .history import History, RecordedStep, Stopped

__all__ = ["Divergence", "History", "RecordedStep", "Replayed", "replay_history"]


@dataclass(frozen=True)
class Replayed:
    """One history replayed: how many of its steps held, and where it parted (None: it holds)
    or, holding, where it had to stop short."""

    history: History
    steps: int
    divergence: Divergence | None
    same_version: bool  # the history was recorded with this very workflow (content hash)
    stopped: Stopped | None = None  # it held, but replay had to end it short (what it lacks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.history.kind,
            "id": self.history.id,
            "workflowId": self.history.workflow_id,
            "holds": self.divergence is None,
            "stepsReplayed": self.steps,
            "stepsRecorded": len(self.history.steps),
            "sameVersion": self.same_version,
            "divergence": self.divergence.to_dict() if self.divergence else None,
            "lacks": list(self.history.lacks),
            "forkedFrom": link_json(self.history.forked_from),
            "stopped": self.stopped.to_dict() if self.stopped else None,
        }


def replay_history(definition: Mapping[str, Any], history: History) -> Replayed:
    """``history`` walked again against ``definition`` (compiled, as served)."""
    stopped = None
    if history.kind == "session":
        from .sessions import replay_session

        steps, divergence = replay_session(definition, history)
    else:
        from .runs import replay_run

        steps, divergence, stopped = replay_run(definition, history)
    same = history.workflow_hash == workflow_hash(definition)
    return Replayed(history, steps, divergence, same, stopped)
