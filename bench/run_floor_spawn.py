"""The spawn itself, in the floor and in the engine (docs/benchmarks.md, Runs: the runs floor).

In one process, as `bench/run_floor.py` runs them, the floor's loop and the engine's run of
``--steps`` × ``true`` take turns; each `subprocess.Popen` is timed whole and in its
``_fork_exec`` (the ``vfork`` and the child's ``execve`` until it lets the parent go: kernel
work, the same call with the same options on both sides). Printed per round: the median of
each. Run it pinned to one CPU (``taskset -c 0``) to see the spawn without the scheduler moving
the children between the cores (``perf stat -e cpu-migrations`` counts those moves).

    .venv/bin/python bench/run_floor_spawn.py [--steps 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import run_floor  # noqa: E402

_fork_exec = run_floor._spawns  # each spawn's `_fork_exec`, timed by `run_floor.time_spawns`
_popen: list[int] = []


def timed_spawns() -> None:
    run_floor.time_spawns()
    real_init = subprocess.Popen.__init__

    def init(self: subprocess.Popen[bytes], *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter_ns()
        real_init(self, *args, **kwargs)
        _popen.append(time.perf_counter_ns() - started)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign,assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from workrail_engine.runs import RunOptions, RunService

    timed_spawns()
    directory = Path(tempfile.mkdtemp(prefix="workrail-spawn-"))
    service = RunService(directory, allow_commands=True, home=directory / "home")
    service.start()
    results = run_floor.SqliteResults(directory)
    floor = run_floor.Floor(directory, results)
    argv = [shutil.which("true") or "true"]
    steps = [{"id": f"s{i}", "title": "t", "run": {"command": argv}} for i in range(args.steps)]

    def engine(name: str, count: int) -> None:
        workflow = {"id": name, "name": "spawn", "steps": steps[:count]}
        assert service.wait(service.run(workflow, {}, RunOptions()), 3600)["status"] == "success"

    floor.run("warm-up", argv, 20)
    engine("warm-up", 20)
    for round_ in range(1, args.repeat + 1):
        for side in ("floor", "engine"):
            _fork_exec.clear()
            _popen.clear()
            if side == "floor":
                floor.run(f"round-{round_}", argv, args.steps)
            else:
                engine(f"round-{round_}", args.steps)
            popen, fork_exec = (statistics.median(times) / 1e3 for times in (_popen, _fork_exec))
            message = f"round {round_} {side:6}: Popen {popen:6.1f} µs, of it _fork_exec"
            print(f"{message} {fork_exec:6.1f} µs (1-min load {os.getloadavg()[0]:.1f})")
    for done in (service.close, results.close):
        done()
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
