"""A run's step events: every step's start and end, in order, however short the step; a reader
that keeps its cursor misses none, and one that starts late sees only what follows."""

from __future__ import annotations

import sys
import threading
import time

from workrail_engine.runs import RunOptions
from workrail_engine.runs.step_events import MAX_EVENTS_PER_RUN, StepEvents

STEPS = 8


def _workflow(workflow_id: str) -> dict:
    return {
        "id": workflow_id,
        "name": "Fast steps",
        "description": "Commands that end at once, and a prompt step",
        "version": "1.0.0",
        "steps": [
            *(
                {
                    "id": f"s{i}",
                    "title": f"Step {i}",
                    "run": {"command": [sys.executable, "-c", ""]},
                }
                for i in range(STEPS)
            ),
            {"id": "ask", "title": "Ask", "prompt": "Say done."},
        ],
    }


def _read_until(service, run_id: str, cursor: int, last: str) -> list[dict]:
    events: list[dict] = []
    while not events or events[-1]["event"] != last:
        read = service.step_events(run_id, cursor, 30.0)
        assert read.events or not read.closed, events
        assert read.missed == 0
        events += read.events
        cursor = read.cursor
    return events


def test_every_step_start_and_end_in_order(service) -> None:
    run_id = service.run(_workflow("fast-steps"), {}, RunOptions())
    events = _read_until(service, run_id, 0, "waiting")
    seen = [(e["event"], e["step"]) for e in events]
    expected = [(kind, f"s{i}") for i in range(STEPS) for kind in ("started", "ended")]
    assert seen == [*expected, ("waiting", "ask")]
    assert events[0]["title"] == "Step 0" and events[1]["status"] == "success"
    assert events[-1]["title"] == "Ask"
    # A reader starting now (a task following the answer) sees only what follows it.
    cursor = service.step_cursor(run_id)
    service.continue_run(run_id, "done", wait_seconds=0)
    after = _read_until(service, run_id, cursor, "ended")
    assert [(e["event"], e["step"]) for e in after] == [("ended", "ask")]


def test_a_reader_waits_for_the_next_event_and_a_closed_feed_ends_the_wait() -> None:
    feeds = StepEvents()
    feeds.open("wf-x")
    got = []
    reader = threading.Thread(target=lambda: got.append(feeds.read("wf-x", 0, 10.0)))
    reader.start()
    feeds.add("wf-x", "started", "a")
    reader.join(5)
    assert got and [e["step"] for e in got[0].events] == ["a"] and got[0].cursor == 1
    feeds.close("wf-x")
    closed = feeds.read("wf-x", 1, 10.0)
    assert closed is not None and closed.closed and closed.events == []
    assert feeds.read("wf-unknown", 0, 0.0) is None


def test_a_reader_too_far_behind_is_told_how_many_it_missed() -> None:
    feeds = StepEvents()
    feeds.open("wf-long")
    for i in range(MAX_EVENTS_PER_RUN + 5):
        feeds.add("wf-long", "ended", f"s{i}", status="success")
    read = feeds.read("wf-long", 0, 0.0)
    assert read is not None and read.missed == 5
    assert read.events[0]["step"] == "s5" and read.cursor == MAX_EVENTS_PER_RUN + 5


def test_a_steps_end_is_told_while_the_next_step_runs(service) -> None:
    """The feed's bookkeeping is done while the next step's process runs, not held until the run
    pauses or ends: the first step's end and the second's start come while the second sleeps."""
    workflow = {
        "id": "told-while-running",
        "name": "Told while running",
        "steps": [
            {"id": "quick", "title": "Quick", "run": {"command": [sys.executable, "-c", ""]}},
            {
                "id": "slow",
                "title": "Slow",
                "run": {"command": [sys.executable, "-c", "import time; time.sleep(20)"]},
            },
        ],
    }
    run_id = service.run(workflow, {}, RunOptions())
    try:
        events: list[dict] = []
        cursor, deadline = 0, time.monotonic() + 10.0  # the slow step sleeps for 20 s
        while len(events) < 3 and time.monotonic() < deadline:
            read = service.step_events(run_id, cursor, 1.0)
            events, cursor = events + read.events, read.cursor
        assert [(e["event"], e["step"]) for e in events[:3]] == [
            ("started", "quick"),
            ("ended", "quick"),
            ("started", "slow"),
        ]
        assert service.get(run_id)["status"] == "running"
    finally:
        service.cancel(run_id, "the test is over")
