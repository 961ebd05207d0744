"""The model-answer loop and what it and a person leave in the store, without any protocol:
a scripted ``ask`` and ``confirm`` over a real session store (SQLite, and Postgres for the
counts two store clients make at once)."""

from __future__ import annotations

import threading
import uuid

import pytest

from workrail_engine.answers.model_loop import ModelLimits, answer_with_model, usage_of
from workrail_engine.sessions import SessionService
from workrail_engine.sessions.model_answers import SessionForModel
from workrail_engine.sessions.store import SessionStore

FLOW = {
    "id": "model-flow",
    "name": "Model",
    "description": "A checked step a person confirms, then one kept for the agent",
    "version": "1.0.0",
    "steps": [
        {
            "id": "plan",
            "title": "Plan",
            "prompt": "Plan it",
            "requireConfirmation": True,
            "validationCriteria": [
                {"type": "contains", "value": "PLAN", "message": "Start with PLAN"}
            ],
        },
        {"id": "ship", "title": "Ship", "prompt": "Ship it", "sampling": False},
    ],
}


@pytest.fixture
def sessions(tmp_path):
    service = SessionService(home=tmp_path / "runs")
    yield service
    service.close()


def _scripted(*texts: str):
    asked: list[dict] = []
    replies = list(texts)

    def ask(request):
        asked.append(dict(request))
        return {"text": replies.pop(0), "model": "scripted"} if replies else None

    return ask, asked


def test_a_refusal_is_sent_back_to_the_model_and_recorded(sessions):
    decisions = [
        {"action": "reject", "comment": "name the risks", "by": "Ann"},
        {"action": "approve", "by": "Ann"},
    ]
    step = sessions.start(FLOW, goal="plan the release")
    ask, asked = _scripted("no plan", "PLAN: release", "PLAN: release, risks named")
    target = SessionForModel(sessions, step, lambda _step: decisions.pop(0))
    usage = answer_with_model(target, sessions.store, ask, ModelLimits(), can_confirm=True)
    # The first answer failed its check, the second was rejected by the person: both sent back,
    # which used the step's one retry; the agent takes over.
    assert usage.calls == 2 and "failed its checks" in (usage.stopped or "")
    assert "Start with PLAN" in asked[1]["prompt"]
    refusals = sessions.store.refusals(step.run_id)
    assert [(r["action"], r["comment"], r["by"]) for r in refusals] == [
        ("reject", "name the risks", "Ann")
    ]
    snap = sessions.get(step.run_id)
    assert snap["waiting"]["confirmations"][0]["comment"] == "name the risks"
    assert snap["sampling"] == {"calls": 2, "tokens": 4000}
    # A later call (the agent's next continue): the model's next answer is approved.
    ask, asked = _scripted("PLAN: release, risks named")
    target = SessionForModel(sessions, target.step, lambda _step: decisions.pop(0))
    usage = answer_with_model(target, sessions.store, ask, ModelLimits(), can_confirm=True)
    assert target.step.pending["stepId"] == "ship" and usage.calls == 3
    assert "sampling: false" in (usage.stopped or "")
    result = sessions.get(step.run_id)["step_results"][0]
    assert [c["action"] for c in result["confirmations"]] == ["reject", "approve"]
    assert result["model_usage"] == {"calls": 3, "tokens": 6000, "model": "scripted"}


def test_a_step_a_person_must_confirm_stops_the_model_when_nobody_can_be_asked(sessions):
    step = sessions.start(FLOW, goal="plan")
    ask, asked = _scripted("PLAN")
    target = SessionForModel(sessions, step, None)
    usage = answer_with_model(target, sessions.store, ask, ModelLimits(), can_confirm=False)
    assert asked == [] and usage.calls == 0 and "confirmation" in (usage.stopped or "")


def _count_from_two_clients(url: str) -> tuple[int, int]:
    run_id = f"wf-{uuid.uuid4().hex[:12]}"
    stores = [SessionStore(url), SessionStore(url)]
    try:
        threads = [
            threading.Thread(
                target=lambda s=store: [s.count_model_call(run_id, 7) for _ in range(25)]
            )
            for store in stores
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return usage_of(stores[0], run_id).calls, usage_of(stores[1], run_id).tokens
    finally:
        for store in stores:
            store.close()


def test_model_calls_are_counted_once_each_by_two_store_clients_on_sqlite(tmp_path):
    (tmp_path / "runs").mkdir()
    assert _count_from_two_clients(f"sqlite:///{tmp_path / 'runs' / 'runs.sqlite'}") == (50, 350)


def test_model_calls_are_counted_once_each_by_two_store_clients_on_postgres(postgres_url):
    assert _count_from_two_clients(postgres_url) == (50, 350)
