"""CPU time of `workrail validate` from two versions of the project, taking turns.

    .venv/bin/python bench/validate_cpu.py --before REV [--after REV] [--rounds 9] [--files 1000]
        [--distinct]

Runs ``workrail validate DIR --format json`` on the 1,000 files `bench/validate.py` generates, from
``--before`` (a git revision) and ``--after`` (a git revision, or by default this working tree),
each from its own bytecode, one after the other for ``--rounds`` rounds, and prints the CPU time
(user+sys) of each run, the medians and the fastest of each and their ratios, with the load. CPU
time, not wall time: on a shared machine the wall time of the same run moves several-fold.
``--distinct``: the corpus of `bench/validate.py --distinct`, where no step is met twice.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import validate as validate_bench  # noqa: E402
from validate_outputs import RUN, _tree  # noqa: E402


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="git revision to compare against")
    parser.add_argument("--after", help="git revision (default: this working tree)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument(
        "--distinct", action="store_true", help="no step shared between files (unrelated workflows)"
    )
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="workrail-cpu-"))
    try:
        trees = {"before": _tree(args.before, work / "trees"), "after": _tree(args.after, work)}
        corpus = work / "corpus"
        corpus.mkdir()
        validate_bench.generate(corpus, args.files, distinct=args.distinct)
        load = os.getloadavg()
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                before = _children_cpu()
                subprocess.run(
                    [sys.executable, "-c", RUN, "validate", str(corpus), "--format", "json"],
                    env={**os.environ, "PYTHONPATH": str(tree)},
                    cwd=work,
                    stdout=subprocess.DEVNULL,
                    check=False,
                )
                cpu[name].append(_children_cpu() - before)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, times in cpu.items():
        print(
            f"{name}: median {statistics.median(times):.3f} s, fastest {min(times):.3f} s; "
            + ", ".join(f"{t:.3f}" for t in times)
        )
    median = statistics.median(cpu["after"]) / statistics.median(cpu["before"])
    fastest = min(cpu["after"]) / min(cpu["before"])
    print(f"after / before: medians {median:.3f}, fastest {fastest:.3f}")
    print(
        f"load average (1, 5, 15 min) at the start: {', '.join(f'{x:.1f}' for x in load)}; "
        f"at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
