"""Which runs get their recorded answer again when a process opens the store: those waiting on
the very step whose answer is recorded, and no other."""

from __future__ import annotations

from typing import Any

from workrail_engine.answers.store import Answer
from workrail_engine.runs import answer_delivery
from workrail_engine.runs.answer_delivery import MESSAGE, deliver_recorded_answers


class _Runtime:
    def __init__(self, states: dict[str, dict[str, Any]]) -> None:
        self.states = states
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def events(self, run_id: str) -> dict[str, Any]:
        return {"state": self.states[run_id]}

    def send(self, run_id: str, message: dict[str, Any]) -> None:
        self.sent.append((run_id, message))


class _Store:
    def __init__(self, answers: dict[tuple[str, str], dict[str, Any] | None]) -> None:
        self.answers = answers
        self.lookups: list[list[str]] = []

    def answered_keys(self, run_ids: list[str]) -> set[tuple[str, str]]:
        self.lookups.append(run_ids)
        return {key for key in self.answers if key[0] in run_ids}

    def answer(self, run_id: str, step_key: str) -> Answer | None:
        response = self.answers.get((run_id, step_key))
        return Answer(step_key, "digest", step_key, None, None, response, 0.0)


def _waiting(key: str) -> dict[str, Any]:
    return {"status": "waiting", "waiting": {"step_key": key}}


def test_only_a_run_waiting_on_its_answered_step_gets_the_answer_again(monkeypatch):
    monkeypatch.setattr(answer_delivery, "_IDS_PER_QUERY", 2)
    message = {"step_key": "plan", "output": "the plan", "context": {}}
    runtime = _Runtime(
        {
            "wf-lost": _waiting("plan"),  # answered, never sent
            "wf-moved-on": _waiting("report"),  # its answer to plan was acted on
            "wf-unanswered": _waiting("plan"),
            "wf-running": {"status": "running"},
            "wf-old-store": _waiting("plan"),  # answered before messages were kept
        }
    )
    store = _Store(
        {
            ("wf-lost", "plan"): {MESSAGE: message},
            ("wf-moved-on", "plan"): {MESSAGE: message},
            ("wf-running", "plan"): {MESSAGE: message},
            ("wf-old-store", "plan"): None,
        }
    )
    sent = deliver_recorded_answers(runtime, store, list(runtime.states))  # type: ignore[arg-type]
    assert sent == ["wf-lost"] and runtime.sent == [("wf-lost", message)]
    assert [len(ids) for ids in store.lookups] == [2, 2, 1]  # the ids looked up in batches
