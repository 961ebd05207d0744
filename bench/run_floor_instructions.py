"""Instructions of the engine against its floor, by phase and by thread, counted by callgrind
(load-independent, unlike bench/run_floor.py's times; docs/benchmarks.md, Runs).

Run as is, it runs itself under ``valgrind --tool=callgrind --separate-threads=yes`` (the
children not traced) and prints, per phase, the instructions of the threads that executed
more than 200,000: the store launched and warmed (``setup``), the floor's ``--steps`` steps
(``floor``: thread 1), `RunService.run` of a workflow of as many steps (``run_call``: thread 1),
the run to its end seen by `RunService.wait` (``walk_and_wait``: the run's thread, and thread 1's
wait with its final read), and one more `RunService.get` of the ended run (``get``). The other
threads are DBOS's and the store's pollers: the slower valgrind makes the process, the more
they count. A phase ends with ``callgrind_control -d``.

    .venv/bin/python bench/run_floor_instructions.py [--steps 1000] [--database URL]

(1,000 steps take about ten minutes under valgrind on the 2-core machine.)
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PRINTED_ABOVE = 200_000  # a thread's instructions in a phase, below which it is not printed


def phases(steps: int, database: str | None) -> None:
    """The measured process (under callgrind)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run_floor import Floor, PostgresResults, SqliteResults

    from workrail_engine.runs import RunOptions, RunService

    def dump(label: str) -> None:
        subprocess.run(
            ["callgrind_control", "-d", label, str(os.getpid())],
            stdout=subprocess.DEVNULL,
            check=True,
        )

    directory = Path(tempfile.mkdtemp(prefix="workrail-floor-"))
    argv = [shutil.which("true") or "true"]
    service = RunService(directory, allow_commands=True, home=directory / "home", database=database)
    service.start()
    results = PostgresResults(database) if database else SqliteResults(directory)
    floor = Floor(directory, results)
    workflow_steps = [
        {"id": f"step-{i}", "title": f"step {i}", "run": {"command": argv}} for i in range(steps)
    ]
    floor.run("warm-up", argv, 10)
    warm = {"id": "warm-up", "name": "floor", "steps": workflow_steps[:10]}
    service.wait(service.run(warm, {}, RunOptions()), 600)
    dump("setup")
    floor.run("floor", argv, steps)
    dump("floor")
    run_id = service.run(
        {"id": "engine", "name": "floor", "steps": workflow_steps}, {}, RunOptions()
    )
    dump("run_call")
    ended = service.wait(run_id, 3600)
    assert ended["status"] == "success" and ended["steps_completed"] == steps, ended
    dump("walk_and_wait")
    service.get(run_id)
    dump("get")
    service.close()
    results.close()
    shutil.rmtree(directory, ignore_errors=True)


def summary(out: Path) -> None:
    by_phase: dict[tuple[int, str], dict[int, int]] = collections.defaultdict(dict)
    for dumped in out.parent.glob(out.name + ".*"):
        text = dumped.read_text(errors="replace")
        part = re.search(r"^part: (\d+)", text, re.M)
        thread = re.search(r"^thread: (\d+)", text, re.M)
        trigger = re.search(r"^desc: Trigger: dump (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if part and thread and trigger and total:
            by_phase[(int(part[1]), trigger[1])][int(thread[1])] = int(total[1])
    for (_, phase), threads in sorted(by_phase.items()):
        shown = ", ".join(
            f"thread {t}: {n:,}" for t, n in sorted(threads.items()) if n > PRINTED_ABOVE
        )
        print(f"{phase:14s} {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--database", help="an empty Postgres database's URL (default: SQLite)")
    parser.add_argument("--measured", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measured:
        phases(args.steps, args.database)
        return
    out = Path(tempfile.mkdtemp(prefix="workrail-callgrind-")) / "callgrind.out"
    command = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--dump-instr=no"]
    command += [f"--callgrind-out-file={out}", sys.executable, __file__, "--measured"]
    command += ["--steps", str(args.steps)] + (
        ["--database", args.database] if args.database else []
    )
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    summary(out)
    shutil.rmtree(out.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
