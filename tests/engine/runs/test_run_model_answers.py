"""A run's prompt steps answered by a model and confirmed by a person, without any protocol:
a scripted ``ask`` and ``confirm`` over a real `RunService` (DBOS on SQLite)."""

from __future__ import annotations

from runs_support import workflow

from workrail_engine.answers.model_loop import ModelLimits
from workrail_engine.runs import RunOptions
from workrail_engine.runs.model_answers import answer_run_with_model

CONFIRMED = workflow(
    {
        "id": "plan",
        "title": "Plan",
        "prompt": "Plan it",
        "requireConfirmation": True,
        "validationCriteria": [{"type": "contains", "value": "PLAN", "message": "Start with PLAN"}],
    },
    {"id": "ship", "title": "Ship", "prompt": "Ship it", "sampling": False},
)


def _waiting(service, wf) -> dict:
    run_id = service.run(wf, {}, RunOptions())
    state = service.wait(run_id, 60)
    assert state["status"] == "waiting", state
    return state


def _finish(service, run_id: str) -> None:
    """The agent ships: the run ends (none is left waiting when the module's service stops)."""
    assert service.continue_run(run_id, "shipped", wait_seconds=30)["status"] == "success"


def test_a_refused_answer_goes_back_to_the_model_and_the_refusal_stays_with_the_run(service):
    state = _waiting(service, CONFIRMED)
    run_id = state["workflow_id"]
    replies = [
        {"action": "reject", "comment": "name the risks", "by": "Ann"},
        {"action": "approve"},
    ]
    asked: list[dict] = []
    answers = ["PLAN: go", "PLAN: go; risks: none"]

    def ask(request):
        asked.append(dict(request))
        return {"text": answers.pop(0), "model": "scripted"}

    moved, usage = answer_run_with_model(
        service, state, ask, ModelLimits(), confirm=lambda _step: replies.pop(0), wait_seconds=30
    )
    # Rejected once (sent back with the person's comment), then approved; the next step is the
    # agent's.
    assert "name the risks" in asked[1]["prompt"]
    assert moved["waiting"]["step_key"] == "ship" and usage.calls == 2
    assert "sampling: false" in (usage.stopped or "")
    got = service.get(run_id)
    plan = got["step_results"][0]
    assert plan["output"] == "PLAN: go; risks: none"
    assert [(c["action"], c["by"]) for c in plan["confirmations"]] == [
        ("reject", "Ann"),
        ("approve", "a person"),
    ]
    assert plan["model_usage"] == {"calls": 2, "tokens": 4000, "model": "scripted"}
    assert got["sampling"] == {"calls": 2, "tokens": 4000}
    _finish(service, run_id)


def test_an_agents_answer_refused_keeps_the_run_waiting(service):
    state = _waiting(service, CONFIRMED)
    run_id = state["workflow_id"]
    refused = service.continue_run(
        run_id, "PLAN: go", confirm=lambda _step: {"action": "cancelled", "by": "Bo"}
    )
    assert refused["outcome"] == "blocked" and refused["status"] == "waiting"
    assert refused["confirmation"]["action"] == "cancelled"
    assert "cancelled by Bo" in refused["issues"][0]
    assert service.get(run_id)["waiting"]["confirmations"][0]["by"] == "Bo"
    # Nothing was applied: the same text can be answered again (and approved this time).
    moved = service.continue_run(run_id, "PLAN: go", confirm=lambda _step: {"action": "approve"})
    assert moved["outcome"] == "accepted" and moved["waiting"]["step_key"] == "ship"
    _finish(service, run_id)
