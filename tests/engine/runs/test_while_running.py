"""The queue of bookkeeping done while the run's next step runs: in order, and at once when it
is queued from another thread (a parallel member)."""

from __future__ import annotations

import threading

from workrail_engine.runs.while_running import WhileRunning


def test_work_is_done_in_the_order_it_was_queued_and_only_when_run() -> None:
    queue = WhileRunning()
    done: list[int] = []
    for i in range(3):
        queue.add(done.append, i)  # the work and its arguments, no partial made
    assert done == []
    queue.run()
    assert done == [0, 1, 2]
    queue.run()
    assert done == [0, 1, 2]


def test_work_queued_from_another_thread_is_done_at_once() -> None:
    queue = WhileRunning()
    done: list[str] = []
    thread = threading.Thread(target=queue.add, args=(done.append, "member"))
    thread.start()
    thread.join()
    assert done == ["member"]
