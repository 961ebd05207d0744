"""Session replay on hand-made histories: what a history that did not record its answers'
artifacts can and cannot say (the end-to-end tests, on histories a real server recorded, are in
tests/cli/test_replay_cli.py)."""

from __future__ import annotations

import pytest

from workrail_engine.replay import History, RecordedStep, replay_history
from workrail_engine.replay.records import LACKS

FLOW = {
    "id": "contract-flow",
    "name": "Contract flow",
    "version": "1.0.0",
    "steps": [
        {
            "id": "decide",
            "title": "Decide",
            "prompt": "Decide",
            "outputContract": {"contractRef": "wr.contracts.loop_control"},
        },
        {"id": "after", "title": "After", "prompt": "After"},
    ],
}


def history(lacks: list[str]) -> History:
    answer = {"output": "decided", "artifacts": [], "context": {}}
    return History(
        "session",
        "wf-test",
        "contract-flow",
        None,
        {"context": {"goal": "g"}},
        [RecordedStep("1", "decide", "answered", answer)],
        {"status": "waiting", "pending": "2", "pending_step": "after"},
        lacks,
    )


@pytest.mark.parametrize(
    ("lacks", "kind"),
    [
        pytest.param([], "blocked", id="artifacts-recorded-none-given"),
        pytest.param([LACKS["answer_given"]], None, id="artifacts-not-recorded"),
    ],
)
def test_a_contract_judges_artifacts_only_when_they_were_recorded(lacks, kind):
    replayed = replay_history(FLOW, history(lacks))
    assert (replayed.divergence.kind if replayed.divergence else None) == kind
