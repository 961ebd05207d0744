"""What each of the executor's Popen options costs a spawn of ``true`` (the runs' goal, docs/benchmarks.md).

A command step is started with ``subprocess.Popen`` and options a bare ``subprocess.run`` does
not use: a process group (or a session) of its own, a working directory, an environment. Each
case spawns the command ``--spawns`` times with both pipes read, as the executor does; the cases
take turns, round by round, and the medians are printed with the CPU time of the children
(``getrusage(RUSAGE_CHILDREN)``: the kernel's work for them shows there, waiting does not) and
the 1-minute load.

    .venv/bin/python bench/spawn_options.py [--spawns 1000] [--repeat 4]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from typing import Any


def spawn_loop(argv: list[str], spawns: int, options: dict[str, Any]) -> None:
    for _ in range(spawns):
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
            **options,
        )
        proc.communicate()


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spawns", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--command", default="true")
    args = parser.parse_args()
    argv = [shutil.which(args.command) or args.command]
    cwd = tempfile.mkdtemp(prefix="workrail-bench-")
    cases: dict[str, dict[str, Any]] = {
        "no option": {},
        "start_new_session=True": {"start_new_session": True},
        "process_group=0": {"process_group": 0},
        "cwd": {"cwd": cwd},
        "env (3 names)": {"env": {k: os.environ.get(k, "") for k in ("PATH", "HOME", "LANG")}},
    }
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    loads = []
    for _ in range(args.repeat):
        for name, options in cases.items():
            before, started = children_cpu(), time.perf_counter()
            spawn_loop(argv, args.spawns, options)
            wall[name].append(1000 * (time.perf_counter() - started) / args.spawns)
            cpu[name].append(1000 * (children_cpu() - before) / args.spawns)
        loads.append(os.getloadavg()[0])
    print(
        f"{args.spawns} spawns of {args.command} per case and round; 1-min load {[round(x, 1) for x in loads]}"
    )
    for name in cases:
        print(
            f"  {name:24s} wall {statistics.median(wall[name]):.3f} ms/spawn "
            f"(rounds {', '.join(f'{x:.2f}' for x in wall[name])}); "
            f"children's CPU {statistics.median(cpu[name]):.3f} ms"
        )
    shutil.rmtree(cwd, ignore_errors=True)


if __name__ == "__main__":
    main()
