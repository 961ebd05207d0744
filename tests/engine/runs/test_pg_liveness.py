"""Executor liveness on a real PostgreSQL server (the ``postgres_url`` fixture in conftest.py),
a fresh database per test.

The executors are real worker processes holding their lock on their own sessions; "dead" is
``kill -9``. Claimers use a short grace so a test takes seconds, not the default two ticks.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import psycopg
import pytest

from workrail_engine.runs.pg_liveness import PostgresLiveness, lock_key

pytestmark = pytest.mark.slow

WORKER = """
import sys, time
from workrail_engine.runs.pg_liveness import PostgresLiveness, lock_key
live = PostgresLiveness(sys.argv[1], sys.argv[2])
live.start()
print("ready", flush=True)
if sys.argv[3] == "close":
    live.close()
    print("closed", flush=True)
elif sys.argv[3] == "leave":  # as a process exits with runs left to others
    sys.stdin.readline()
    live.leaving()
    print("left", flush=True)
    sys.stdin.readline()
else:
    time.sleep(60)
"""


class Worker:
    """An executor in its own process, registered and holding its lock once started."""

    def __init__(self, url: str, executor_id: str, mode: str = "sleep") -> None:
        self.executor_id = executor_id
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, url, executor_id, mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ready(self) -> Worker:
        line = self.process.stdout.readline().strip()
        assert line == "ready", self.process.stderr.read()
        return self

    def kill(self) -> float:
        """``kill -9``; when it was sent."""
        os.kill(self.process.pid, signal.SIGKILL)
        sent = time.monotonic()
        self.process.wait()
        return sent

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()


@pytest.fixture
def url(postgres_url, request):
    """A database of its own for each test: no executor row is left over from another."""
    name = f"liveness_{request.node.name.removeprefix('test_')[:40]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return postgres_url.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture
def workers(url):
    started: list[Worker] = []

    def start(executor_id: str, mode: str = "sleep") -> Worker:
        worker = Worker(url, executor_id, mode)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def claimers(url):
    opened: list[PostgresLiveness] = []

    def open_one(executor_id: str, **options: float) -> PostgresLiveness:
        live = PostgresLiveness(url, executor_id, **{"interval": 0.1, "grace": 0.3, **options})
        live.start()
        opened.append(live)
        return live

    yield open_one
    for live in opened:
        live.close()


def registered(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT executor_id FROM workrail.executors")}


def poll(condition, seconds: float = 10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    return condition()


def test_a_live_executor_is_never_claimed(workers, claimers, url):
    worker = workers("alive").ready()
    claimer = claimers("claimer")
    deadline = time.monotonic() + 1.5  # five times the grace
    while time.monotonic() < deadline:
        assert claimer.claim_dead() == []
        time.sleep(0.05)
    assert registered(url) == {"alive", "claimer"}
    assert worker.process.poll() is None


def test_a_killed_executor_is_claimed(workers, claimers, url):
    worker = workers("doomed").ready()
    claimer = claimers("claimer", grace=0.0)
    assert claimer.claim_dead() == []
    sent = worker.kill()
    assert poll(claimer.claim_dead) == ["doomed"]
    # Measured from kill -9 to the claim: the lock is free as soon as the server reads the EOF.
    print(f"claimed {time.monotonic() - sent:.3f} s after kill -9")
    assert claimer.claim_dead() == [], "a claimed executor is not claimed twice by the same session"
    claimer.forget(["doomed"])
    assert registered(url) == {"claimer"}


def died_with_their_session(url: str, names: list[str]) -> list[str]:
    """Executors registered, their locks taken, on one session that then ends: as dead as a
    killed process, and cheaper to have many of."""
    with psycopg.connect(url, autocommit=True) as conn:
        for executor_id in names:
            conn.execute("SELECT pg_advisory_lock(%s)", (lock_key(executor_id),))
            conn.execute(
                "INSERT INTO workrail.executors(executor_id, lock_key) VALUES (%s, %s)",
                (executor_id, lock_key(executor_id)),
            )
    return names


def race(racers: list[PostgresLiveness], url: str) -> list[list[str]]:
    """Both claim and forget in a loop until only they are left; what each claimed. One reads
    the rows, the other deletes some and frees their locks before the first tries them: the
    first must then find those rows gone."""
    claims: list[list[str]] = [[] for _ in racers]
    start = threading.Barrier(len(racers))

    def claim(index: int) -> None:
        start.wait()
        deadline = time.monotonic() + 5
        while len(registered(url)) > len(racers) and time.monotonic() < deadline:
            got = racers[index].claim_dead()
            claims[index].extend(got)
            racers[index].forget(got)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(len(racers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return claims


def test_racing_claimers_each_dead_executor_goes_to_exactly_one(workers, claimers, url):
    killed = [workers(f"killed-{i}") for i in range(3)]
    for worker in killed:
        worker.ready().kill()
    racers = [claimers("racer-a", grace=0.0), claimers("racer-b", grace=0.0)]
    dead = [w.executor_id for w in killed] + died_with_their_session(
        url, [f"gone-{i:02d}" for i in range(50)]
    )
    for round in range(3):  # the interleavings differ from round to round
        claims = race(racers, url)
        assert Counter(claims[0] + claims[1]) == Counter(dead), claims
        assert registered(url) == {"racer-a", "racer-b"}
        dead = died_with_their_session(url, [f"gone-{round}-{i:02d}" for i in range(50)])


class Interleaved(PostgresLiveness):
    """A claimer that lets another act between reading the rows and trying a lock: the window
    the race above only hits now and then, opened every time."""

    def __init__(self, url: str, executor_id: str, before_lock) -> None:
        super().__init__(url, executor_id, interval=0.1, grace=0.0)
        self.before_lock = before_lock

    def _try_lock(self, conn, executor_id: str, key: int) -> bool:
        self.before_lock(executor_id)
        return super()._try_lock(conn, executor_id, key)


def test_a_claimer_that_read_a_row_since_forgotten_leaves_it_alone(claimers, url):
    first = claimers("first", grace=0.0)

    def first_recovers_it(executor_id: str) -> None:
        if executor_id == "doomed":
            assert poll(first.claim_dead) == ["doomed"]
            first.forget(["doomed"])

    late = Interleaved(url, "late", first_recovers_it)
    late.start()
    try:
        died_with_their_session(url, ["doomed"])
        assert late.claim_dead() == [], (
            "the lock was free again, but its executor was recovered already"
        )
    finally:
        late.close()
    assert registered(url) == {"first"}


def test_a_simultaneous_claim_goes_to_one_claimer(workers, claimers):
    worker = workers("doomed").ready()
    racers = [claimers("racer-a", grace=0.0), claimers("racer-b", grace=0.0)]
    worker.kill()
    time.sleep(0.5)  # the server has ended the dead session
    results: list[list[str]] = [[], []]
    start = threading.Barrier(2)

    def claim(index: int) -> None:
        start.wait()
        results[index] = racers[index].claim_dead()

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [[], ["doomed"]]


def test_a_closed_executor_leaves_nothing_to_claim(workers, claimers, url):
    worker = workers("tidy", mode="close").ready()
    assert worker.process.stdout.readline().strip() == "closed"
    assert worker.process.wait(10) == 0
    claimer = claimers("claimer", grace=0.0)
    assert claimer.claim_dead() == []
    assert registered(url) == {"claimer"}


def test_an_executor_that_left_is_claimed_at_the_first_check_once_its_lock_is_free(
    workers, claimers, url
):
    """A process that exits on purpose with runs left pending says so first: no grace for it
    (the grace is for living processes reconnecting after a server restart), but never before
    its session ends. A killed one beside it still waits out the grace."""
    leaver, killed = workers("leaver", mode="leave").ready(), workers("killed").ready()
    claimer = claimers("claimer", grace=3600.0)
    leaver.process.stdin.write("\n")
    leaver.process.stdin.flush()
    assert leaver.process.stdout.readline().strip() == "left"
    assert claimer.claim_dead() == [], "its lock is still held: it has not exited yet"
    killed.kill()
    leaver.process.stdin.write("\n")  # it exits: its session ends, and its lock with it
    leaver.process.stdin.flush()
    assert leaver.process.wait(10) == 0
    assert poll(claimer.claim_dead) == ["leaver"]
    time.sleep(0.3)
    assert claimer.claim_dead() == [], "the killed one is a suspect for the grace"
    claimer.forget(["leaver"])
    assert registered(url) == {"claimer", "killed"}


def test_a_store_made_before_executors_could_leave_gets_the_column(url):
    """Stores whose executors table predates the mark of a process leaving get the column when
    a process next starts on them."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA workrail")
        conn.execute(
            "CREATE TABLE workrail.executors(executor_id text PRIMARY KEY, lock_key bigint NOT"
            " NULL, host text, pid int, started_at double precision)"
        )
        conn.execute(
            "INSERT INTO workrail.executors(executor_id, lock_key) VALUES ('old', %s)",
            (lock_key("old"),),
        )
    live = PostgresLiveness(url, "new", interval=0.1, grace=0.0)
    live.start()
    try:
        assert live.claim_dead() == ["old"]
        live.leaving()
    finally:
        live.close()
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT executor_id FROM workrail.executors").fetchall() == [("old",)]


def test_watch_recovers_then_forgets(workers, claimers, url):
    worker = workers("doomed").ready()
    watcher = claimers("watcher")
    recovered: list[list[str]] = []
    watcher.watch(recovered.append)
    time.sleep(0.5)
    assert recovered == []
    worker.kill()
    assert poll(lambda: recovered) == [["doomed"]]
    assert poll(lambda: registered(url) == {"watcher"})
    time.sleep(0.5)
    assert recovered == [["doomed"]], "recovered once"


def test_a_failed_recovery_leaves_the_executor_claimable(workers, claimers, url, caplog):
    worker = workers("doomed").ready()
    failing = claimers("failing")
    attempts: list[list[str]] = []

    def recover(executor_ids: list[str]) -> None:
        attempts.append(executor_ids)
        raise RuntimeError("the database of runs is unavailable")

    failing.watch(recover)
    worker.kill()
    assert poll(lambda: attempts)[0] == ["doomed"]
    # The failing watcher holds the lock only while its recover() runs: another claimer gets it.
    other = claimers("other", grace=0.0)
    assert poll(other.claim_dead) == ["doomed"]
    assert "doomed" in registered(url)
    assert any(
        "recovering the runs of dead executors" in r.getMessage() and r.levelno == logging.ERROR
        for r in caplog.records
    )


def test_living_executors_survive_the_loss_of_every_session(claimers, url, caplog):
    """A server restart or failover ends every session: each living watcher takes its lock back
    within a tick, and the grace keeps the others from declaring it dead meanwhile."""
    watchers = [claimers(f"alive-{i}", interval=0.1, grace=0.5) for i in range(3)]
    recovered: list[list[str]] = []
    for watcher in watchers:
        watcher.watch(recovered.append)
    with psycopg.connect(url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = 'workrail-liveness' AND datname = current_database()"
        ).fetchone()[0]
    assert ended == 3
    time.sleep(2.0)
    assert recovered == []
    assert registered(url) == {"alive-0", "alive-1", "alive-2"}
    assert any("liveness check failed" in r.getMessage() for r in caplog.records), (
        "the loss was seen"
    )
    assert claimers("judge", grace=0.0).claim_dead() == [], "every lock is held again"


def keepalive_timers(port: int, side: str) -> list[float]:
    """Seconds to the next keepalive probe of the established loopback sockets on one side of
    ``port`` (from ``ss``: the kernel's own view, whoever set the options)."""
    lines = subprocess.run(
        ["ss", "-tnoH", "state", "established", f"( {side} = :{port} )"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    timers = []
    for line in lines:
        found = re.search(r"timer:\(keepalive,(?:(\d+)min)?(?:([\d.]+)sec)?(?:(\d+)ms)?", line)
        assert found, line
        minutes, seconds, millis = found.groups()
        timers.append(60 * float(minutes or 0) + float(seconds or 0) + float(millis or 0) / 1000)
    return timers


def test_both_ends_of_a_session_probe_a_silent_peer_within_seconds(workers, url):
    """A vanished machine is noticed by keepalives (idle 5 s, then 3 probes 2 s apart) instead of
    the kernel's default of two hours: on the server's end, so the dead executor's lock is freed,
    and on the client's, so a living process reconnects."""
    workers("probe").ready()
    port = int(re.search(r":(\d+)/", url).group(1))
    time.sleep(0.5)  # the registration's packets are acknowledged; the keepalive timers run
    assert [t <= 5 for t in keepalive_timers(port, "sport")] == [True]
    assert [t <= 5 for t in keepalive_timers(port, "dport")] == [True]
