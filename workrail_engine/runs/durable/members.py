"""A parallel group's members: threads of the run's process on SQLite; on Postgres, rows of the
member queue (member_queue.py) that every process allowed to run commands takes from, so that
several machines share the work. Either way at most ``limit`` run at a time, and each member
records its result in the journal as it ends."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from dbos._error import DBOSWorkflowCancelledError  # what DBOS itself catches as "cancelled"

if TYPE_CHECKING:
    from .effects import RunEffects

__all__ = ["MEMBER_LOOK", "MEMBER_POLL", "Members", "MemberEnds", "in_threads", "on_member_queue"]

# (step key, step, values) of each member, in the group's order
Members = list[tuple[str, dict[str, Any], dict[str, Any]]]

# How often a run waiting for its queued members reads whether one ended: members taken by this
# process wake it at once, those of another process by their end's notification where this
# process listens to the member queue (the look is then a safety net), else only by this.
MEMBER_POLL = 0.025  # seconds
MEMBER_LOOK = 0.5  # seconds


class MemberEnds:
    """The ends of the queued members this process executed, counted: what a run waiting for its
    members here is woken by (see `on_member_queue`)."""

    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition()

    def mark(self) -> int:
        """Take before looking whether a member ended: `wait` returns at once if one has since."""
        return self._count

    def add(self) -> None:
        with self._changed:
            self._count += 1
            self._changed.notify_all()

    def wait(self, mark: int, seconds: float) -> None:
        with self._changed:
            if self._count == mark:
                self._changed.wait(seconds)


def in_threads(
    effects: RunEffects, members: Members, limit: int, deadline: float | None
) -> list[dict[str, Any]]:
    """Threads of this process, at most ``limit`` at a time; each member records its result as
    it ends (the walk records it again afterwards, which is a no-op)."""
    with ThreadPoolExecutor(max_workers=limit, thread_name_prefix="workrail-member") as pool:
        futures = [
            pool.submit(effects.member, key, step, values, deadline)
            for key, step, values in members
        ]
        try:
            return [future.result() for future in futures]
        finally:
            for future in futures:
                future.cancel()


def on_member_queue(
    effects: RunEffects, members: Members, limit: int, deadline: float | None
) -> list[dict[str, Any]]:
    """Members on the member queue, at most ``limit`` queued or running at a time (a sliding
    window): the limit holds for the run whichever processes take them.

    No DBOS call: a member is a row queued in the journal's database; the window learns its end
    from its result row (or its row's end, for one that ended without a result), read in one
    query when a member ends — told at once by this process's member queue, for members of any
    process — or every `MEMBER_LOOK` s in case a notification was missed."""
    run_id, journal = effects.run_id, effects.journal
    results: list[dict[str, Any]] = [{} for _ in members]
    waiting = list(enumerate(members))
    running: dict[str, int] = {}  # step key -> index
    ended = effects.runtime.member_ends
    look = MEMBER_POLL if effects.runtime.member_queue is None else MEMBER_LOOK
    while waiting or running:
        queued: list[tuple[str, str]] = []
        while waiting and len(running) < limit:
            index, (key, step, values) = waiting.pop(0)
            member = {
                "step": step,
                "values": values,
                "deadline": deadline,
                "secret_names": effects.secret_names,
            }
            queued.append((key, json.dumps(member)))
            running[key] = index
        if queued:
            journal.enqueue_members(run_id, queued)
        seen = ended.mark()
        found = journal.queued_member_ends(run_id, running)
        if not found:
            ended.wait(seen, look)
            continue
        for name, end in found.items():
            if name is None or end == "cancelled":  # the run was cancelled
                raise DBOSWorkflowCancelledError(f"run {run_id} was cancelled")
            if not isinstance(end, dict):
                raise RuntimeError(f"the parallel member {name} failed: {end}")
            results[running.pop(name)] = end
            effects.recorded.add(name)
    return results
