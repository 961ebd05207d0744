"""Linear-time regexes: RE2 (what WorkRail runs) against Python's backtracking `re`.

Usage: .venv/bin/python bench/regexes.py [--runs N]

Times `(a+)+$` against "a" * n + "b" (no match, the worst case for backtracking). RE2 is timed
for n up to 1,000,000 through workrail_engine.evaluation.regexes; Python's `re` only for small n, because
each extra character doubles its work.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

from workrail_engine.evaluation.regexes import compile_regex

PATTERN = "(a+)+$"
# other classic catastrophic-backtracking shapes, each against "a" * n + "!"
OTHERS = (r"^(\w+\s?)*$", r"(a|aa)+c", r"(a+a+)+y")


def median_seconds(search, text: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        found = search(text)
        samples.append(time.perf_counter() - started)
        assert not found
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    re2_search = compile_regex(PATTERN).search
    print(f"pattern {PATTERN!r} against 'a' * n + 'b', median of {args.runs} runs")
    print(f"{'engine':<10} {'n':>9} {'median':>12}")
    for n in (1_000, 50_000, 1_000_000):
        seconds = median_seconds(re2_search, "a" * n + "b", args.runs)
        print(f"{'RE2':<10} {n:>9,} {seconds * 1000:>9.3f} ms")
    for pattern in OTHERS:
        search = compile_regex(pattern).search
        for n in (50_000, 1_000_000):
            seconds = median_seconds(search, "a" * n + "!", args.runs)
            print(f"{'RE2':<10} {n:>9,} {seconds * 1000:>9.3f} ms   {pattern}")
    python_re = re.compile(PATTERN)
    for n in (16, 18, 20, 22):
        seconds = median_seconds(
            lambda text: python_re.search(text) is not None, "a" * n + "b", max(1, args.runs // 2)
        )
        print(f"{'python re':<10} {n:>9,} {seconds * 1000:>9.3f} ms")


if __name__ == "__main__":
    main()
