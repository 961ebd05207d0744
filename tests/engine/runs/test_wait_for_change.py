"""A waiter never misses a change that lands between reading a run and starting to wait."""

from __future__ import annotations

import time

import pytest

from workrail_engine.runs.durable.progress import RunProgress


@pytest.fixture
def progress() -> RunProgress:
    return RunProgress()


def test_a_change_after_the_read_but_before_the_wait_returns_at_once(progress) -> None:
    progress.live["wf-race"] = [0, 0]
    mark = progress.change_mark("wf-race")  # taken before the run is read
    progress.live["wf-race"][0] += 1  # the run moves on while the caller looks at its old state
    started = time.monotonic()
    progress.wait_for_change("wf-race", 5.0, steps=False, since=mark)
    assert time.monotonic() - started < 1.0


def test_without_a_change_the_wait_lasts_its_time(progress) -> None:
    progress.live["wf-still"] = [0, 0]
    mark = progress.change_mark("wf-still")
    started = time.monotonic()
    progress.wait_for_change("wf-still", 0.3, steps=False, since=mark)
    assert time.monotonic() - started >= 0.3


def test_a_run_that_starts_after_the_mark_counts_as_changed(progress) -> None:
    mark = progress.change_mark("wf-new")  # not executing here yet
    progress.live["wf-new"] = [1, 0]  # it started and reached a state
    started = time.monotonic()
    progress.wait_for_change("wf-new", 5.0, steps=False, since=mark)
    assert time.monotonic() - started < 1.0
