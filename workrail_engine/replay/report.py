"""Replays as diagnostics of the workflow files, so that `workrail replay` prints them with the
formatters of `workrail validate` (text with code frames, json, sarif, github): each divergence
an error at the construct that causes it, what old histories lack one note per workflow.

Codes: WR901 another step served, WR902 a recorded answer now blocked, WR903 a recorded step gone
or renamed, WR904 a loop that stops sooner or later, WR905 (info) histories recorded before the
record kept all replay reads (one note per workflow), and each history replay had to stop short
at a step for want of it (at that step).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, Severity, Span
from ..lint.report import FileReport
from ..runs.fork import link_place
from ..text.document import WorkflowDocument
from . import Replayed, replay_history
from .divergence import Divergence, construct_pointer
from .history import History

__all__ = ["DIVERGENCE_CODES", "LACKS_CODE", "ReplayTarget", "replay_reports"]

DIVERGENCE_CODES = {"step": "WR901", "blocked": "WR902", "gone": "WR903", "loop": "WR904"}
LACKS_CODE = "WR905"


@dataclass
class ReplayTarget:
    """A workflow file replayed against: its document, and its compiled definition (None when
    it cannot be served — its ``problems`` say why, and its histories are not replayed)."""

    path: str
    document: WorkflowDocument
    definition: Mapping[str, Any] | None
    problems: list[Diagnostic] = field(default_factory=list)

    @property
    def workflow_id(self) -> str | None:
        value = self.document.value
        found = value.get("id") if isinstance(value, Mapping) else None
        return found if isinstance(found, str) else None


def _span(document: WorkflowDocument, pointer: str) -> Span:
    """A member's key (``runCondition``, ``loop/condition``); an id's value (a rename)."""
    if pointer.endswith("/id"):
        return document.value_span(pointer) or Span(0, 0)
    return document.key_span(pointer) or document.value_span(pointer) or Span(0, 0)


def _diagnostic(target: ReplayTarget, history: History, divergence: Divergence) -> Diagnostic:
    pointer = construct_pointer(target.document.value, divergence)
    return Diagnostic(
        DIVERGENCE_CODES[divergence.kind],
        Severity.ERROR,
        f"{_named(history)}: {divergence.message}",
        pointer,
        _span(target.document, pointer),
        data={"history": history.id, **divergence.to_dict()},
    )


def _stopped(target: ReplayTarget, replayed: Replayed) -> Diagnostic:
    """A history replay had to end short, at the step whose record it lacks."""
    assert replayed.stopped is not None
    stopped = replayed.stopped
    blamed = Divergence("step", stopped.at, "", stopped.step_id, None, None, None)
    pointer = construct_pointer(target.document.value, blamed)
    return Diagnostic(
        LACKS_CODE,
        Severity.INFO,
        f"{_named(replayed.history)}: replay stops at step {stopped.step_id!r} ({stopped.at}):"
        " the history predates what replay reads and lacks the answer given to it; the steps"
        " from there on are not replayed",
        pointer,
        _span(target.document, pointer),
        data={"history": replayed.history.id, **stopped.to_dict()},
    )


def _named(history: History) -> str:
    """``run wf-…``, and where it was forked from when it is a fork."""
    parent = history.forked_from
    if parent is None:
        return f"{history.kind} {history.id}"
    return f"{history.kind} {history.id} (forked from {parent['run_id']} at {link_place(parent)})"


def _lacks(target: ReplayTarget, histories: Sequence[History]) -> list[Diagnostic]:
    counts = Counter(lack for history in histories for lack in history.lacks)
    return [
        Diagnostic(
            LACKS_CODE,
            Severity.INFO,
            f"{n} recorded histor{'y' if n == 1 else 'ies'} of this workflow predate{'s' if n == 1 else ''}"
            f" what replay reads, and lack {lack}",
            "/id",
            _span(target.document, "/id"),
        )
        for lack, n in sorted(counts.items())
    ]


def replay_reports(
    targets: Sequence[ReplayTarget], histories: Iterable[History]
) -> tuple[list[FileReport], list[Replayed]]:
    """Every history of a target's workflow replayed against it: one report per target (its
    problems, divergences, notes), and the replays."""
    by_id = {t.workflow_id: t for t in targets if t.workflow_id is not None}
    of_target: dict[str, list[History]] = {}
    for history in histories:
        if history.workflow_id in by_id:
            of_target.setdefault(history.workflow_id, []).append(history)
    reports, replays = [], []
    for target in targets:
        report = FileReport(target.path, target.document, list(target.problems))
        mine = of_target.get(target.workflow_id or "", [])
        if target.definition is not None:
            for history in mine:
                replayed = replay_history(target.definition, history)
                replays.append(replayed)
                if replayed.divergence is not None:
                    report.diagnostics.append(_diagnostic(target, history, replayed.divergence))
                if replayed.stopped is not None:
                    report.diagnostics.append(_stopped(target, replayed))
            report.diagnostics += _lacks(target, mine)
        report.diagnostics.sort(key=lambda d: d.sort_key())
        reports.append(report)
    return reports, replays
