"""Replay of a recorded run: the run walker itself (`runs.walker.RunWalker`) walks the workflow as
it is now with effects that execute nothing — a command attempt returns its recorded outcome, a
wait for the agent returns the recorded answer (checked first against the step as it is now) —
and every step result the walk records is compared with the history's, in order. The walk's
decisions (conditions, loops, retries, onFailure) are the engine's own; only the effects differ.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..answers.record import MaskedAnswer
from ..answers.verdict import checked_answer
from ..definition.declared import declared_secrets
from ..runs.commands import output_verdict
from ..runs.fork import fork_walk
from ..runs.walker import RunWalker, condition_context
from .divergence import Divergence, Shape, blocked, diverged, skip_changed
from .history import History, RecordedStep, Stopped
from .records import LACKS

__all__ = ["replay_run"]

_ITERATION = re.compile(r"\[(\d+)\]$")  # a step key's innermost loop iteration: ID[2]


class _Parted(Exception):
    def __init__(self, divergence: Divergence | None, stopped: Stopped | None = None) -> None:
        self.divergence = divergence  # None: the history ends here, and held up to here
        self.stopped = stopped  # why it ends here when it went on (what it did not record)


class _RecordedEffects:
    """`walker.Effects` answered from a history; raises `_Parted` where the walk leaves it."""

    def __init__(self, definition: Mapping[str, Any], history: History) -> None:
        self.definition = definition
        self.history = history
        self.shape = Shape(definition)
        self.remaining: list[RecordedStep] = list(history.steps)
        self.by_key = {step.key: step for step in history.steps}
        self.taken: set[str] = set()  # parallel members' results handed out, recorded next
        self.judged: dict[str, dict[str, Any]] = {}  # each step's last attempt, judged now
        self.walker: RunWalker | None = None
        self.replayed = 0

    # --- where the walk and the history part ---------------------------------------------

    def _next_recorded(self) -> RecordedStep | None:
        return self.remaining[0] if self.remaining else None

    def next_served(self) -> RecordedStep | None:
        """The next recorded step that was not skipped."""
        return next((s for s in self.remaining if s.status != "skipped"), None)

    def _part(self, key: str, step_id: str | None) -> _Parted:
        """The walk wants step ``key`` (``step_id``; None: it ends) where the history has the
        next recorded step — or ended, which is no divergence unless the history finished."""
        expected = self.next_served()
        if expected is None and not self.history.finished:
            return _Parted(None)
        at = f"step key {expected.key}" if expected is not None else f"step key {key}"
        recorded = expected.step_id if expected else None
        reached = _ITERATION.search(expected.key) if expected else None
        return _Parted(
            diverged(self.shape, at, recorded, step_id, int(reached[1]) if reached else None)
        )

    def _recorded(self, key: str, step_id: str) -> RecordedStep:
        found = self.by_key.get(key)
        if found is None:
            raise self._part(key, step_id)
        return found

    # --- the effects ---------------------------------------------------------------------

    def attempt(
        self, key: str, step: dict[str, Any], values: dict[str, Any], attempt: int, deadline: Any
    ) -> dict[str, Any]:
        recorded = self._recorded(key, step["id"])
        outcome = recorded.attempts.get(str(attempt))
        if outcome is None and attempt > 1 and key in self.judged:
            # the walk retries where the history went on: the attempt before failed now
            raise _Parted(_outcome_changed(key, step["id"], "", self.judged[key]))
        if outcome is None:
            raise self._part(key, step["id"])
        judged = self.judged[key] = _judged_again(step, dict(outcome), values)
        return judged

    def parallel(
        self, members: list[tuple[str, dict[str, Any], dict[str, Any]]], limit: int, deadline: Any
    ) -> list[dict[str, Any]]:
        results = []
        for key, step, _ in members:
            recorded = self._recorded(key, step["id"])
            results.append({"step_name": key, "step_id": step["id"], **(recorded.result or {})})
            self.taken.add(key)
        return results

    def wait(self, key: str, waiting: dict[str, Any], deadline: Any) -> dict[str, Any] | None:
        recorded = self.by_key.get(key)
        given = recorded.answer if recorded is not None else None
        if recorded is not None and given is None:
            # answered, its answer not recorded (recorded before it was kept; or a fork of such
            # a run, which had no answer to keep): as far as it goes, and it says so
            lack = LACKS["answer_message"]
            raise _Parted(None, Stopped(f"step key {key}", waiting["step"]["id"], lack))
        if given is None and self.history.end.get("pending") == key:
            given = self.history.end.get("answer")
            if given is None:
                raise _Parted(None)  # the history waits here: it held up to its end
        if given is None:
            raise self._part(key, waiting["step"]["id"])
        step_id = waiting["step"]["id"]
        answer = MaskedAnswer(
            given.get("output"), list(given.get("artifacts") or []), given.get("context") or {}, ""
        )
        assert self.walker is not None
        values = {
            **self.walker.values,
            "context": {**self.walker.values["context"], **answer.context},
        }
        _, refused = checked_answer(
            self.definition,
            self.shape.steps[step_id],
            answer,
            condition_context(values),
            require_notes=False,
        )
        if refused is not None:
            raise _Parted(blocked(f"step key {key}", step_id, refused.issues))
        if recorded is None:
            raise _Parted(None)  # answered, not yet acted on when it was recorded: held
        return {"output": answer.output, "context": answer.context, "artifacts": answer.artifacts}

    def record(self, result: dict[str, Any]) -> None:
        key = result["step_name"]
        if key in self.taken:
            self.taken.discard(key)
            self.remaining = [s for s in self.remaining if s.key != key]
            self.replayed += 1
            return
        skipped_now = result["status"] == "skipped"
        # a step skipped on one side only was served on neither: no divergence
        while (
            self.remaining
            and self.remaining[0].status == "skipped"
            and self.remaining[0].key != key
        ):
            self.remaining.pop(0)
        expected = self._next_recorded()
        if expected is not None and expected.key == key:
            was = (expected.result or {}).get("status")
            if not skipped_now and was not in (None, "skipped") and was != result["status"]:
                raise _Parted(_outcome_changed(key, expected.step_id, was, result))
            if skipped_now != (expected.status == "skipped"):
                raise _Parted(
                    skip_changed(self.shape, f"step key {key}", expected.step_id, skipped_now)
                )
            self.remaining.pop(0)
            self.replayed += 1
            return
        if not skipped_now:
            raise self._part(key, result.get("step_id"))

    def sleep_until(self, moment: float) -> None:
        return None

    def state(self, state: dict[str, Any]) -> None:
        return None


def _judged_again(
    step: Mapping[str, Any], outcome: dict[str, Any], values: Mapping[str, Any]
) -> dict[str, Any]:
    """A recorded attempt whose command exited 0, judged by the step's criteria as they are now
    (its text output: a JSON output was parsed when recorded, and its text is not kept)."""
    output = outcome.get("output")
    if not isinstance(output, Mapping) or output.get("exit_code") != 0:
        return outcome
    stdout = output.get("stdout")
    if outcome.get("status") not in ("success", "failed") or not isinstance(stdout, str):
        return outcome
    status, error, validation = output_verdict(step, stdout, values)
    outcome.update(status=status, error=error, validation=validation)
    return outcome


def _outcome_changed(key: str, step_id: str, was: str, now: Mapping[str, Any]) -> Divergence:
    """A command step whose recorded output its criteria judge otherwise now."""
    at = f"step key {key}"
    if now["status"] == "failed":
        return blocked(at, step_id, [str(now.get("error") or "it fails now")], what="output")
    return Divergence(
        "step",
        at,
        f"step {step_id!r} ({at}) ends {now['status']} now where the history has it {was}",
        step_id,
        "validationCriteria",
        step_id,
        step_id,
    )


def replay_run(
    definition: Mapping[str, Any], history: History
) -> tuple[int, Divergence | None, Stopped | None]:
    """(steps replayed, the first divergence or None, where the history had to stop short)."""
    effects = _RecordedEffects(definition, history)
    parameters, switches = dict(history.start.get("parameters") or {}), None
    fork = history.start.get("fork")
    if fork:  # a forked run: walked on its parent's values up to each fork point, as it was
        walk = fork_walk(fork, [step.key for step in history.steps])
        parameters, switches = walk.parameters, walk.switches
    walker = RunWalker(
        dict(definition),
        parameters,
        dict(history.start.get("context") or {}),
        effects,
        deadline=None,
        parallel_limit=None,
        masked_secrets={name: "***" for name in declared_secrets(definition)},
        switches=switches,
    )
    effects.walker = walker
    try:
        walker.run()
    except _Parted as parted:
        return effects.replayed, parted.divergence, parted.stopped
    left = effects.next_served()
    if left is not None:
        at = f"step key {left.key}"
        return effects.replayed, diverged(effects.shape, at, left.step_id, None), None
    return effects.replayed, None, None
