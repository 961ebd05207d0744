"""The durable layer's own behaviour (workrail_engine/runs/durable/), on the real SQLite store:
the process's one runtime and its lifecycle, taking over the runs of dead processes, and the
in-process watching of the runs executing here. (Runs through it end to end: test_runs.py,
test_recovery.py; the wait's mark: test_wait_for_change.py.)"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from workrail_engine.runs import durable
from workrail_engine.runs.commands import AttemptSettings
from workrail_engine.runs.durable import DurableRuntime, NotLaunched
from workrail_engine.runs.durable.members import MemberEnds
from workrail_engine.runs.durable.progress import RunProgress
from workrail_engine.runs.sqlite_store import DATABASE

Launch = Callable[..., DurableRuntime]


def settings(project: Path) -> AttemptSettings:
    return AttemptSettings(project, allow_commands=False)


def lock_files(home: Path) -> set[str]:
    return {path.stem for path in (home / "executors").glob("*.lock")}


def dead_process_lock(home: Path, executor_id: str = "elsewhere-4242-deadbeef") -> str:
    """The lock file a process leaves when it dies with runs in flight: there, but unlocked."""
    (home / "executors").mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "executors" / f"{executor_id}.lock").touch(mode=0o600)
    return executor_id


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Launch]:
    """`durable.launch` on a store of the test's own; whatever it launched is shut down after."""
    assert durable.running() is None, "a runtime of another test is still open in this process"

    def launching(home: Path = tmp_path / "home", **options: object) -> DurableRuntime:
        return durable.launch(home, None, settings(tmp_path), **options)  # type: ignore[arg-type]

    yield launching
    runtime = durable.running()
    if runtime is not None:
        runtime.shutdown()


@pytest.fixture
def workers_started(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The workers a runtime would start (a `workrail worker` process each), recorded instead."""
    started: list[str] = []
    monkeypatch.setattr(
        DurableRuntime, "start_worker", lambda self: started.append(self.executor_id)
    )
    return started


# -- the process's one runtime ------------------------------------------------------------------


def test_one_runtime_per_process_from_launch_to_shutdown(launch, tmp_path) -> None:
    with pytest.raises(NotLaunched, match=r"RunService\.start\(\) first"):
        durable.current()
    home = tmp_path / "home"
    runtime = launch(home)
    assert durable.current() is runtime and durable.running() is runtime
    assert lock_files(home) == {runtime.executor_id}
    assert runtime.executor_alive(runtime.executor_id)

    # the same store: the same runtime, with the newer settings
    newer = AttemptSettings(tmp_path, allow_commands=True)
    assert durable.launch(home, None, newer) is runtime and runtime.settings is newer
    # another store: refused, naming the one in use (DBOS is one per process)
    with pytest.raises(RuntimeError, match="already uses the run store") as refused:
        launch(tmp_path / "other")
    assert str(home) in str(refused.value)

    runtime.shutdown()
    assert durable.running() is None
    with pytest.raises(NotLaunched):
        durable.current()
    assert lock_files(home) == set()  # nothing in flight: nothing left to recover
    runtime.shutdown()  # a second shutdown does nothing

    again = launch(home)  # and the process may open the store again
    assert again is not runtime and again.executor_id != runtime.executor_id


def test_a_launch_that_fails_part_way_leaves_the_process_clean(launch, tmp_path) -> None:
    """The store's database is not one: DBOS and the executor lock were made before that was
    found. The failed launch leaves no runtime and no lock file, and the next one starts clean."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / DATABASE).write_bytes(b"not a database " * 100)
    with pytest.raises(Exception, match="not a database"):
        launch(home)
    assert durable.running() is None
    assert lock_files(home) == set()

    (home / DATABASE).unlink()
    runtime = launch(home)
    assert durable.current() is runtime
    assert runtime.journal.results("no-such-run") == []


# -- taking over from dead processes ----------------------------------------------------------


def test_a_launch_takes_over_what_dead_processes_left(launch, tmp_path, workers_started) -> None:
    home = tmp_path / "home"
    dead = dead_process_lock(home)
    runtime = launch(home)
    assert not runtime.executor_alive(dead)
    assert lock_files(home) == {runtime.executor_id}  # recovered: the dead one's file is gone
    assert workers_started == []  # it executes runs itself


def test_a_process_that_executes_nothing_leaves_the_dead_to_recover_dead_now(
    launch, tmp_path, workers_started
) -> None:
    """A server that only answers runs hands nothing back at launch (a run waiting for the agent
    would be replayed by a worker for nothing): the dead process's runs wait for
    `recover_dead_now`, the call a worker makes. With no run pending there, no worker starts."""
    home = tmp_path / "home"
    dead = dead_process_lock(home)
    runtime = launch(home, executes=False)
    assert lock_files(home) == {runtime.executor_id, dead}
    assert not runtime.needs_worker() and not runtime.busy()
    assert workers_started == []

    runtime.recover_dead_now()
    assert lock_files(home) == {runtime.executor_id}
    assert not runtime.executor_alive(dead) and not runtime.executor_alive(None)


def test_an_answer_hands_a_run_over_only_when_no_live_process_has_it(
    launch, tmp_path, workers_started
) -> None:
    runtime = launch(tmp_path / "home", executes=False)
    runtime.hand_over("no-such-run")  # no run: nobody to wake
    runtime.progress.live["run-here"] = [0, 0]  # executing here: it acts on the answer itself
    runtime.hand_over("run-here")
    assert workers_started == []


# -- watching the runs executing here -------------------------------------------------------------


@pytest.fixture
def runtime() -> RunProgress:
    # the watching is the in-process bookkeeping of the runs live here (`DurableRuntime.progress`)
    return RunProgress()


def in_a_moment(work: Callable[[], None]) -> threading.Thread:
    thread = threading.Timer(0.2, work)
    thread.start()
    return thread


def waited(runtime: RunProgress, run_id: str, seconds: float, **options: object) -> float:
    started = time.monotonic()
    runtime.wait_for_change(run_id, seconds, **options)  # type: ignore[arg-type]
    return time.monotonic() - started


def test_a_state_change_wakes_the_waiter_at_once(runtime) -> None:
    runtime.live["run"] = [0, 0]

    def change() -> None:
        runtime.count("run", 0)
        runtime.notify()

    thread = in_a_moment(change)
    # woken by the notification, long before the 5 s poll that would see the count otherwise
    assert waited(runtime, "run", 10.0, steps=False, poll=5.0) < 2.0
    thread.join()


def test_a_recorded_step_ends_only_a_wait_for_steps(runtime) -> None:
    runtime.live["run"] = [0, 0]
    runtime.count("run", 1)  # a step recorded before the waits: neither sees it as new
    mark = runtime.change_mark("run")
    runtime.count("run", 1)
    assert waited(runtime, "run", 10.0, steps=True, since=mark) < 1.0
    assert waited(runtime, "run", 0.3, steps=False, since=mark) >= 0.3


def test_a_run_that_ends_here_or_a_stop_ends_the_wait(runtime) -> None:
    runtime.live["run"] = [0, 0]
    stop = threading.Event()
    thread = in_a_moment(stop.set)
    assert waited(runtime, "run", 10.0, steps=False, stop=stop) < 2.0
    thread.join()

    thread = in_a_moment(lambda: runtime.live.pop("run"))
    assert waited(runtime, "run", 10.0, steps=False) < 2.0
    thread.join()


def test_a_run_executing_elsewhere_is_only_read_again_after_a_pause(runtime) -> None:
    assert 0.2 <= waited(runtime, "not-here", 10.0, steps=False, remote=0.2) < 2.0
    assert waited(runtime, "not-here", 0.0, steps=False, remote=5.0) < 0.5  # never past its time
    runtime.count("not-here", 0)  # a member's end counted for a run of another process: no error
    assert "not-here" not in runtime.live


def test_member_ends_wake_the_run_waiting_for_them() -> None:
    ends = MemberEnds()
    mark = ends.mark()
    ends.add()  # a member ended between the mark and the wait
    started = time.monotonic()
    ends.wait(mark, 10.0)
    assert time.monotonic() - started < 1.0

    mark = ends.mark()
    thread = in_a_moment(ends.add)
    started = time.monotonic()
    ends.wait(mark, 10.0)
    assert time.monotonic() - started < 2.0
    thread.join()

    started = time.monotonic()
    ends.wait(ends.mark(), 0.2)  # none ends: the wait lasts its time
    assert time.monotonic() - started >= 0.2


def test_the_launch_leaves_the_store_s_objects_out_of_the_collector_s_passes(tmp_path):
    """DBOS, SQLAlchemy and the store are ~95,000 objects kept for the process's life: frozen once
    launched (`gc.freeze`), a full pass of the collector no longer walks them all in the middle of
    a run's steps (30-330 ms every few thousand steps; docs/benchmarks.md, Runs)."""
    code = (
        "import gc, sys; from pathlib import Path; from workrail_engine.runs import RunService; "
        "home = Path(sys.argv[1]); service = RunService(home, allow_commands=False, home=home / 'home'); "
        "service.start(); print(gc.get_freeze_count(), len(gc.get_objects())); service.close()"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    frozen, tracked = map(int, shown.stdout.split())
    assert frozen > 2 * tracked, (frozen, tracked)
