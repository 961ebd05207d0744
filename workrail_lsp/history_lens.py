"""Code lens on each step: how many recorded histories (sessions and runs in the run store) pass
through it — "3 recorded histories pass here" — shown only when the store has any for the
workflow. The counts come from the engine (`replay.records.histories_through_steps`), read from
the run store read-only and kept for `COUNTS_SECONDS` per workflow, so that an editor asking for
lenses on every change reads the store at most that often."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from workrail_engine.definition.steps import walk_steps

from .documents import DocumentState

__all__ = ["COUNTS_SECONDS", "history_lenses"]

log = logging.getLogger(__name__)

COUNTS_SECONDS = 10.0  # how long a workflow's counts are shown before the store is read again
_counts: dict[str, tuple[float, dict[str, int]]] = {}
_lock = threading.Lock()


def _through_steps(workflow_id: str) -> dict[str, int]:
    now = time.monotonic()
    with _lock:
        kept = _counts.get(workflow_id)
    if kept is not None and now - kept[0] < COUNTS_SECONDS:
        return kept[1]
    from workrail_engine.replay.records import histories_through_steps
    from workrail_engine.runs.history import RunHistory

    history = RunHistory()
    try:
        counts = histories_through_steps(history, workflow_id) if history.exists() else {}
    finally:
        history.close()
    with _lock:
        _counts[workflow_id] = (now, counts)
    return counts


def history_lenses(state: DocumentState) -> list[types.CodeLens]:
    value: Any = state.value
    if not state.is_workflow or not isinstance(value, Mapping):
        return []
    workflow_id = value.get("id")
    if not isinstance(workflow_id, str):
        return []
    try:
        counts = _through_steps(workflow_id)
    except Exception:  # a store that cannot be read: the other lenses are still shown
        log.warning("recorded histories could not be counted", exc_info=True)
        return []
    if not counts:
        return []
    lenses = []
    for site in walk_steps(value):
        n = counts.get(site.id or "")
        at = state.tree.key_span(f"{site.pointer}/id") if n else None
        if at is None:
            continue
        title = f"{n} recorded histor{'y passes' if n == 1 else 'ies pass'} here"
        lenses.append(
            types.CodeLens(
                range=state.positions.range(at),
                # a label: clicking it does nothing (`workrail replay` replays them)
                command=types.Command(title=title, command=""),
            )
        )
    return lenses
