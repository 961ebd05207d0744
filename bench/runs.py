"""Benchmark of the orchestrator (docs/benchmarks.md, Runs), in one process:

1. 1,000 trivial command steps in one run, against the same command spawned 1,000 times bare
   (``subprocess.run``); goal: total ≤ 1.2× the bare time on SQLite, ≤ 1.3× on Postgres.
2. 100 parallel ``sleep 0.2`` steps with parallel_limit 10; goal: ≤ 1.1× the ideal 2 s.

Runs use the real durable layer (DBOS on SQLite in a temporary WORKRAIL_HOME), timed from
`RunService.run` to the moment `RunService.wait` sees the run finished.

    .venv/bin/python bench/runs.py [--steps 1000] [--parallel 100] [--repeat 3] [--database URL]
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
from pathlib import Path

from workrail_engine.runs import RunOptions, RunService


def bare(argv: list[str], n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=True)
    return time.perf_counter() - started


def process_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def timed_run(service: RunService, workflow: dict, options: RunOptions) -> tuple[float, dict]:
    started = time.perf_counter()
    run_id = service.run(workflow, {}, options)
    result = service.wait(run_id, 3600)
    return time.perf_counter() - started, result


def sequential(service: RunService, argv: list[str], n: int) -> tuple[float, dict]:
    steps = [{"id": f"step-{i}", "title": f"step {i}", "run": {"command": argv}} for i in range(n)]
    return timed_run(service, {"id": "bench-seq", "name": "seq", "steps": steps}, RunOptions())


def parallel(service: RunService, n: int, limit: int) -> tuple[float, dict]:
    members = [
        {"id": f"nap-{i}", "title": f"nap {i}", "run": {"command": ["sleep", "0.2"]}}
        for i in range(n)
    ]
    group = {"id": "naps", "title": "naps", "type": "parallel", "steps": members}
    return timed_run(
        service,
        {"id": "bench-par", "name": "par", "steps": [group]},
        RunOptions(parallel_limit=limit),
    )


def rounds(repeat: int, measure, label: str, against: str, goal: float) -> None:
    """``repeat`` rounds of ``measure`` (a ratio and a line each); the median against the goal."""
    ratios = []
    for round_ in range(1, repeat + 1):
        ratio, line = measure()
        ratios.append(ratio)
        print(f"  round {round_}: {line} -> {ratio:.2f}x (1-min load {os.getloadavg()[0]:.1f})")
    median = statistics.median(ratios)
    print(
        f"{label}: median {median:.2f}x {against}; goal <= {goal}x: {'met' if median <= goal else 'NOT met'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--parallel", type=int, default=100)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="rounds of each measurement (bare and run alternate; the median is the result)",
    )
    parser.add_argument("--command", default="true", help="the trivial command (default: true)")
    parser.add_argument(
        "--database", help="a Postgres URL (default: SQLite in a temporary WORKRAIL_HOME)"
    )
    args = parser.parse_args()
    argv = [shutil.which(args.command) or args.command]
    home = Path(tempfile.mkdtemp(prefix="workrail-bench-"))
    service = RunService(home, allow_commands=True, home=home, database=args.database)
    started = time.perf_counter()
    service.start()
    print(
        f"store: {args.database or 'SQLite'}; launch (DBOS import + store): {time.perf_counter() - started:.2f} s"
    )
    sequential(service, argv, 10)  # warm-up: caches, the store's first pages

    def sequential_round() -> tuple[float, str]:
        # Alternated, so that a change in the machine's load touches both sides alike. The CPU
        # time of this process (every thread; not the commands'), which the load moves less.
        cpu = process_cpu()
        bare_time = bare(argv, args.steps)
        bare_cpu, cpu = process_cpu() - cpu, process_cpu()
        run_time, result = sequential(service, argv, args.steps)
        run_cpu = process_cpu() - cpu
        assert result["status"] == "success" and result["steps_completed"] == args.steps, result[
            "status"
        ]
        return run_time / bare_time, (
            f"{args.steps} x {args.command}: bare {bare_time:.2f} s, as a run {run_time:.2f} s "
            f"({1000 * (run_time - bare_time) / args.steps:.2f} ms/step overhead; CPU "
            f"{1000 * bare_cpu / args.steps:.3f} / {1000 * run_cpu / args.steps:.3f} ms/step)"
        )

    ideal = args.parallel / args.limit * 0.2

    def parallel_round() -> tuple[float, str]:
        par_time, result = parallel(service, args.parallel, args.limit)
        assert result["status"] == "success", result["status"]
        return (
            par_time / ideal,
            f"{args.parallel} x sleep 0.2, limit {args.limit}: {par_time:.2f} s, ideal {ideal:.2f} s",
        )

    goal = 1.3 if args.database else 1.2
    rounds(args.repeat, sequential_round, f"{args.steps} x {args.command}", "the bare time", goal)
    if args.parallel:  # --parallel 0: the sequential runs only
        rounds(
            args.repeat,
            parallel_round,
            f"{args.parallel} x sleep 0.2, limit {args.limit}",
            "the ideal",
            1.1,
        )
    service.close()
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
