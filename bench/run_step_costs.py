"""Where a step of ``true`` spends the run's thread: CPU per step of each piece (the runs' goal, docs/benchmarks.md).

A profile, not a benchmark of the goal (that is `bench/runs.py`): the pieces of a command step on
the run's thread are wrapped with a timer of the thread's CPU (``time.thread_time_ns``; a wrapper
adds ≈ 1 µs), a run of ``--steps`` steps of ``true`` is made ``--repeat`` times, and the median
µs per step of each piece is printed beside the run thread's whole CPU per step (from
``/proc/self/task/*/schedstat``, nanoseconds) and the bare loop's (``subprocess.run``, the
baseline of `bench/runs.py`), with the 1-minute load. Pieces nest: "attempt" holds "spawn",
"pipes", "the step's end" and the rest of one attempt; "result" holds the journal's commit;
"done while the next step runs" (`while_running`) holds the step events and the process-group
log's ``-`` line, which run in the next attempt's window.

Also printed: the run thread's time per step between one step's pipes' end and the next step's
spawn — wall and CPU — the part of a step the run's thread spends while no step's process runs:
what a run costs over the bare loop on a machine with a core free for the children.

    .venv/bin/python bench/run_step_costs.py [--steps 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from workrail_engine.runs import RunOptions, RunService, command_process, commands, step_processes
from workrail_engine.runs.durable.effects import RunEffects
from workrail_engine.runs.executor_liveness import InFlight
from workrail_engine.runs.journal import Journal
from workrail_engine.runs.step_events import StepEvents
from workrail_engine.runs.while_running import WhileRunning

_spent: dict[str, int] = {}

# (owner, attribute, label): what is timed
PIECES: list[tuple[Any, str, str]] = [
    (RunEffects, "attempt", "attempt (all of it)"),
    (RunEffects, "record", "result (all of it)"),
    (command_process.subprocess, "Popen", "spawn: Popen"),
    (command_process, "_pump", "pipes: read to their end"),
    (step_processes, "ended", "the step's end (step_processes.ended)"),
    (Journal, "add_result", "journal: the result's commit"),
    (Journal, "add_attempt", "journal: the attempt (held)"),
    (commands, "_spec", "rendering the command"),
    (commands, "_judge", "judging the outcome"),
    (InFlight, "expect", "process-group log: ? (before the spawn)"),
    (InFlight, "add", "process-group log: +"),
    (StepEvents, "add", "step events"),
    (InFlight, "log_end", "process-group log: - (while the next runs)"),
    (WhileRunning, "run", "done while the next step runs"),
]
_between: dict[str, float] = {"wall": 0.0, "cpu": 0.0}
_ended: list[tuple[float, float]] = []  # (wall, thread CPU) at the last step's pipes' end


def between_steps() -> None:
    """Adds to `_between` the time from the last `_pump`'s return to each `_spawn`'s call."""
    pump, spawn = command_process._pump, command_process._spawn

    def pumped(*args: Any, **kwargs: Any) -> Any:
        try:
            return pump(*args, **kwargs)
        finally:
            _ended[:] = [(time.perf_counter(), time.thread_time())]

    def spawned(*args: Any, **kwargs: Any) -> Any:
        if _ended:
            (wall, cpu), _ended[:] = _ended[0], []
            _between["wall"] += time.perf_counter() - wall
            _between["cpu"] += time.thread_time() - cpu
        return spawn(*args, **kwargs)

    command_process._pump, command_process._spawn = pumped, spawned


def timed(owner: Any, name: str, label: str) -> None:
    real = getattr(owner, name)

    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time_ns()
        try:
            return real(*args, **kwargs)
        finally:
            _spent[label] = _spent.get(label, 0) + time.thread_time_ns() - started

    setattr(owner, name, wrapper)


def thread_cpu() -> dict[str, int]:
    """Nanoseconds on a CPU of each thread of this process."""
    found = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                found[tid] = int(f.read().split()[0])
        except OSError:  # ended meanwhile
            pass
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for owner, name, label in PIECES:
        timed(owner, name, label)
    between_steps()
    argv = [shutil.which("true") or "true"]
    home = Path(tempfile.mkdtemp(prefix="workrail-bench-"))
    service = RunService(home, allow_commands=True, home=home)
    service.start()
    steps = [{"id": f"step-{i}", "title": "t", "run": {"command": argv}} for i in range(args.steps)]
    workflow = {"id": "bench-costs", "name": "costs", "steps": steps}
    service.wait(service.run(workflow, {}, RunOptions()), 3600)  # warm-up
    main_thread = str(os.getpid())
    pieces: dict[str, list[float]] = {}
    run_thread, bare_thread, between_wall, between_cpu = [], [], [], []
    for _ in range(args.repeat):
        before = thread_cpu()
        for _ in range(args.steps):
            subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=True)
        after = thread_cpu()
        bare_thread.append((after[main_thread] - before[main_thread]) / args.steps / 1e3)
        _spent.clear()
        _between.update(wall=0.0, cpu=0.0)
        _ended.clear()  # not from the last run's last step to this run's first
        before = thread_cpu()
        result = service.wait(service.run(workflow, {}, RunOptions()), 3600)
        after = thread_cpu()
        assert result["status"] == "success", result["status"]
        # the run's thread: the busiest one but the main thread (which only waits)
        run_thread.append(
            max(ns - before.get(tid, 0) for tid, ns in after.items() if tid != main_thread)
            / args.steps
            / 1e3
        )
        between_wall.append(_between["wall"] / args.steps * 1e6)
        between_cpu.append(_between["cpu"] / args.steps * 1e6)
        for label, ns in _spent.items():
            pieces.setdefault(label, []).append(ns / args.steps / 1e3)
    print(
        f"{args.steps} steps of true, {args.repeat} runs; 1-min load {os.getloadavg()[0]:.1f}\n"
        f"  CPU per step of the run's thread: {statistics.median(run_thread):.0f} µs "
        f"(runs {', '.join(f'{x:.0f}' for x in run_thread)}); of the bare loop's: "
        f"{statistics.median(bare_thread):.0f} µs\n"
        f"  between a step's pipes' end and the next spawn: wall {statistics.median(between_wall):.0f} µs, "
        f"CPU {statistics.median(between_cpu):.0f} µs (runs {', '.join(f'{x:.0f}' for x in between_wall)} µs of wall)"
    )
    for label, values in sorted(pieces.items(), key=lambda item: -statistics.median(item[1])):
        print(f"  {label:40s} {statistics.median(values):6.1f} µs")
    service.close()
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
