"""An answer recorded for a run reaches the run at least once.

`RunService.continue_run` records the answer (the answers table: one per step, exactly once) and
then sends it to the waiting run (DBOS's ``send`` on its ``continue`` topic): two writes, two
commits. A process that ends between them left the answer recorded and the run waiting for it
for good — a retry of the answer was a replay that sent nothing, another answer was refused.

So the message sent is kept with the answer, and sent again where the run may not have had it:
by a retry of the same answer while the run has not acted on it, and by every MCP server that
opens the store, for each run in flight that waits on a step whose answer is recorded. A run
takes only the message for the step it waits on and drops any other
(`durable.effects.RunEffects.wait`), so a message sent twice is acted on once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..answers.store import Answer, AnswerStore
    from .durable import DurableRuntime

__all__ = [
    "CRASH_AFTER_RECORDING",
    "MESSAGE",
    "crash_point",
    "deliver",
    "deliver_again",
    "deliver_recorded_answers",
]

MESSAGE = "message"  # where the message sent to the run is kept in its answer's response
_IDS_PER_QUERY = 1000  # run ids per look-up of their answers (far below SQL's bound on them)

# Fault injection for the tests: the process ends at once (as a kill -9 would) right after an
# answer is recorded and before it is sent, the moment this module exists for.
CRASH_AFTER_RECORDING = "WORKRAIL_TEST_CRASH_AFTER_ANSWER_RECORDED"
_CRASH_EXIT = 70


def crash_point(variable: str = CRASH_AFTER_RECORDING) -> None:
    """End the process at once, as a kill -9 would, when the environment sets ``variable`` (a
    crash test's; every one named by the module whose moment it marks)."""
    if os.environ.get(variable):
        os._exit(_CRASH_EXIT)


def deliver(runtime: DurableRuntime, run_id: str, message: Mapping[str, Any]) -> None:
    """Send ``message`` to the run, and make sure a live process acts on it."""
    runtime.send(run_id, dict(message))
    runtime.hand_over(run_id)


def _message_of(answer: Answer | None) -> Mapping[str, Any] | None:
    message = (answer.response or {}).get(MESSAGE) if answer is not None else None
    return message if isinstance(message, Mapping) else None


def deliver_again(runtime: DurableRuntime, store: AnswerStore, run_id: str, step_key: str) -> None:
    """Send the recorded answer to ``step_key`` again (a retry of it: as the first time)."""
    message = _message_of(store.answer(run_id, step_key))
    if message is not None:
        deliver(runtime, run_id, message)


def deliver_recorded_answers(
    runtime: DurableRuntime, store: AnswerStore, in_flight: list[str]
) -> list[str]:
    """Each run of ``in_flight`` that waits on a step whose answer is recorded gets it again;
    the runs it was sent to. Sent only: the launch that opened the store has already handed a
    run on a dead process to a live one (`DurableRuntime.needs_worker` counts an answered run)."""
    answered: set[tuple[str, str]] = set()
    for start in range(0, len(in_flight), _IDS_PER_QUERY):
        answered |= store.answered_keys(in_flight[start : start + _IDS_PER_QUERY])
    sent = []
    for run_id in sorted({run_id for run_id, _ in answered}):
        state = runtime.events(run_id).get("state") or {}
        waiting = state.get("waiting") or {}
        key = waiting.get("step_key")
        if state.get("status") != "waiting" or (run_id, key) not in answered:
            continue
        message = _message_of(store.answer(run_id, str(key)))
        if message is not None:
            runtime.send(run_id, dict(message))
            sent.append(run_id)
    return sent
