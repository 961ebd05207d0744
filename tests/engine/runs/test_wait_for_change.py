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


def test_a_run_that_ended_here_since_the_mark_returns_at_once_not_after_a_remote_look(
    progress,
) -> None:
    progress.live["wf-done"] = [0, 0]
    mark = progress.running_mark("wf-done")  # executing here, not waiting for the agent
    assert mark == [0, 0]
    progress.ended("wf-done")  # it ends before the waiter starts waiting
    started = time.monotonic()
    progress.wait_for_change("wf-done", 10.0, steps=False, since=mark, here=True, remote=10.0)
    assert time.monotonic() - started < 1.0  # not the 10 s look of a run executing elsewhere


def test_a_run_waiting_for_the_agent_has_no_running_mark(progress) -> None:
    progress.live["wf-asks"] = [1, 0]
    progress.waiting.add("wf-asks")
    assert progress.running_mark("wf-asks") is None
    assert progress.running_mark("wf-elsewhere") is None
