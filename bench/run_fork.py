"""Benchmark of forking a run (docs/benchmarks.md, Forking a run), in one process:

a run of 1,000 command steps (``true``) is forked from its last step, then from its middle step;
each fork is timed from `RunService.fork` to the moment `RunService.wait` sees it finished, and
the rows it copied (the store's ``forks`` row) are checked against the rows it keeps (the
parent's journal rows of the steps before the fork point). The cost of keeping is the fork from
the last step less a run of that one step alone (its baseline, timed the same way).

    .venv/bin/python bench/run_fork.py [--steps 1000] [--repeat 3] [--database URL]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from workrail_engine.runs import RunOptions, RunService


def process_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def steps(n: int) -> dict:
    return {
        "id": f"bench-fork-{n}",
        "name": "fork",
        "steps": [
            {"id": f"step-{i}", "title": f"step {i}", "run": {"command": ["true"]}}
            for i in range(n)
        ],
    }


def timed(service: RunService, start: Callable[[], str]) -> tuple[float, float, str]:
    """Wall and CPU seconds from ``start()`` (which starts a run) to the run's end."""
    wall, cpu = time.perf_counter(), process_cpu()
    run_id = start()
    result = service.wait(run_id, 3600)
    assert result["status"] == "success", result.get("error_message")
    return time.perf_counter() - wall, process_cpu() - cpu, run_id


def rows_kept(service: RunService, parent: str, kept: int) -> int:
    """The parent's journal rows of its first ``kept`` results' steps, counted in the store."""
    journal = service.runtime.journal if service.runtime is not None else None
    assert journal is not None
    rows = journal._read(  # the bench's own count, not an API: the SQL the copy must match
        "SELECT count(*) FROM {journal} WHERE run_id = ? AND step_key IN (SELECT step_key FROM"
        " {journal} WHERE run_id = ? AND result IS NOT NULL ORDER BY position LIMIT ?)",
        (parent, parent, kept),
    )
    return int(rows[0][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database", help="a Postgres URL (an empty database); default SQLite")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="workrail-bench-fork-"))
    service = RunService(home, allow_commands=True, home=home / "runs", database=args.database)
    service.start()
    try:
        n = args.steps
        _, _, parent = timed(service, lambda: service.run(steps(n), {}, RunOptions()))
        one = {**steps(1), "steps": [{**steps(n)["steps"][-1]}]}
        last, middle, alone = [], [], []
        for round_ in range(1, args.repeat + 1):
            load = os.getloadavg()[0]
            alone.append(timed(service, lambda: service.run(one, {}, RunOptions()))[:2])
            wall, cpu, fork = timed(service, lambda: service.fork(parent, f"step-{n - 1}"))
            last.append((wall, cpu))
            record = next(
                f
                for f in service.runtime.journal.forks_of([parent])[parent]  # type: ignore[union-attr]
                if f["run_id"] == fork
            )
            kept = rows_kept(service, parent, record["kept"])
            assert record["rows_copied"] == kept, (record, kept)
            middle.append(timed(service, lambda: service.fork(parent, f"step-{n // 2}"))[:2])
            print(
                f"  round {round_} (1-min load {load:.1f}): fork from step {n - 1} "
                f"{wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU; the step alone "
                f"{alone[-1][0] * 1000:.0f} ms; rows copied {record['rows_copied']} = rows kept "
                f"{kept}; fork from step {n // 2} {middle[-1][0] * 1000:.0f} ms"
            )

        def median_ms(pairs: list[tuple[float, float]], index: int) -> float:
            return statistics.median(p[index] for p in pairs) * 1000

        print(
            f"fork of a {n}-step run from its last step: median {median_ms(last, 0):.0f} ms wall "
            f"({median_ms(last, 1):.0f} ms CPU), of which keeping {n - 1} steps "
            f"{median_ms(last, 0) - median_ms(alone, 0):.0f} ms over the step alone; from its "
            f"middle step {median_ms(middle, 0):.0f} ms"
        )
    finally:
        service.close()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
