"""The read threads' time bound (no real disk here stalls, so a read is made to stall)."""

from __future__ import annotations

import threading
import time

import pytest

from workrail_lsp.disk_files import ReadTimedOut, _ReadThreads


def test_a_stalled_read_times_out_and_the_next_reads_still_run():
    threads, release = _ReadThreads(limit=3), threading.Event()
    try:
        started = time.monotonic()
        with pytest.raises(ReadTimedOut):
            threads.run(release.wait, timeout=0.3)
        assert 0.3 <= time.monotonic() - started < 2
        assert threads.run(lambda: "read", timeout=2) == "read"  # on another thread
        with pytest.raises(ReadTimedOut):
            threads.run(release.wait, timeout=0.1)
        with pytest.raises(ReadTimedOut):
            threads.run(release.wait, timeout=0.1)
        # three threads stalled: the next read is refused at once instead of waiting
        started = time.monotonic()
        with pytest.raises(ReadTimedOut, match="still stalled"):
            threads.run(lambda: "never run", timeout=5)
        assert time.monotonic() - started < 0.5
    finally:
        release.set()
    # once the disk answers, the stalled threads serve again
    deadline = time.monotonic() + 5
    while True:
        try:
            assert threads.run(lambda: "again", timeout=2) == "again"
            break
        except ReadTimedOut:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_a_reads_error_reaches_the_caller():
    threads = _ReadThreads(limit=2)
    with pytest.raises(FileNotFoundError):
        threads.run(lambda: open("/nonexistent/x.json"), timeout=2)  # noqa: SIM115
    assert threads.run(lambda: 42, timeout=2) == 42
