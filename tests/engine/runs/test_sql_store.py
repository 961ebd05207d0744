"""The run store's own connection on a real PostgreSQL server (the ``postgres_server`` fixture in
conftest.py): a call made while the server is down waits for it to come back."""

from __future__ import annotations

import threading
import time

import pytest

from workrail_engine.runs.journal import Journal

pytestmark = pytest.mark.slow


def test_a_call_outlasts_a_server_that_stays_down_past_the_first_reconnect(postgres_server):
    journal = Journal(postgres_server.url)
    try:
        assert journal.results("no-such-run") == []
        postgres_server.stop()
        answers: list[object] = []
        call = threading.Thread(
            target=lambda: answers.append(_outcome(journal.results, "no-such-run"))
        )
        call.start()
        # Down for longer than the first pauses (0.2 s, 0.4 s): at least one reconnect fails.
        time.sleep(1.5)
        postgres_server.start()
        call.join(60)
        assert answers == [[]]
    finally:
        journal.close()


def _outcome(function, *args):
    try:
        return function(*args)
    except Exception as error:  # the test shows what the call raised instead of an answer
        return error
