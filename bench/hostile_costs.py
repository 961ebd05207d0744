"""What hostile workflow content costs the engine (docs/security.md, What a workflow costs to check,
compile and serve).

Usage: .venv/bin/python bench/hostile_costs.py [--runs N] [--cases lint,regex-time,compile,regex-compile]
       [--findings 2000,4000,20000]

- lint: one prompt holding n x `{{parameters.nope}}` (n findings in one string), `lint_text`;
- regex-time: 200 backtracking rules in one `validate_output`, and 200 `matches` conditions in
  one `next_step`, against "a" * 30;
- compile: a routine with 10,000 `{a}` called with a 100 KB argument (1 GB once compiled):
  time and peak allocation (tracemalloc) of `compile_workflow` until it answers;
- regex-compile: `compile_regex` of the 36-byte `(?!x)(?:(?:a{1000}){1000}){1000}`.

The compile and regex-compile cases allocate without bound on a checkout without the bounds;
run only lint and regex-time there (``--cases lint,regex-time``) to measure "before".
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile_workflows import (  # noqa: E402
    AMPLIFIED_CALLER,
    AMPLIFIER_ROUTINE,
    BACKTRACKING,
    REGEX_COMPILE_BOMB,
    SLOW_TEXT,
    many_findings_workflow,
    regex_rules_workflow,
)


def median_ms(work: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


FINDINGS = [2_000, 4_000, 20_000]  # --findings replaces them


def lint_case(runs: int) -> None:
    from workrail_engine.lint import lint_text

    for count in FINDINGS:
        text = json.dumps(many_findings_workflow(count))
        found = len(lint_text(text, "many-findings.json").diagnostics)
        ms = median_ms(lambda text=text: lint_text(text, "many-findings.json"), runs)
        print(f"lint      {count:>6,} findings in one prompt: {ms:>9.1f} ms ({found} reported)")


def regex_time_case(runs: int) -> None:
    from workrail_engine.evaluation.rules import validate_output
    from workrail_engine.serving.navigator import next_step

    flow = regex_rules_workflow(BACKTRACKING, rules=200)
    criteria = flow["steps"][0]["validationCriteria"]
    ms = median_ms(lambda: validate_output(criteria, SLOW_TEXT), runs)
    print(f"regex     200 backtracking rules, one validation:       {ms:>9.1f} ms")
    ms = median_ms(lambda: next_step(flow, ["answer"], {"x": SLOW_TEXT}), runs)
    print(f"regex     200 `matches` conditions, one next step:      {ms:>9.1f} ms")


def compile_case(runs: int) -> None:
    from workrail_engine.compile import compile_workflow

    routines = {AMPLIFIER_ROUTINE["id"]: AMPLIFIER_ROUTINE}.get
    ms = median_ms(lambda: compile_workflow(AMPLIFIED_CALLER, routines), runs)
    tracemalloc.start()
    problems = compile_workflow(AMPLIFIED_CALLER, routines).problems
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    codes = [p.code for p in problems]
    print(f"compile   1 GB asked for: {ms:>9.1f} ms, peak {peak / 1024:.0f} KiB, {codes}")


def regex_compile_case(runs: int) -> None:
    from workrail_engine.evaluation.regexes import RegexError, compile_regex

    def refuse() -> None:  # a refusal is never cached: each run measures it again
        try:
            compile_regex(REGEX_COMPILE_BOMB)
        except RegexError:
            return
        raise AssertionError("compiled")

    ms = median_ms(refuse, runs)
    print(f"regex     {REGEX_COMPILE_BOMB!r} refused in {ms:.2f} ms")


CASES = {
    "lint": lint_case,
    "regex-time": regex_time_case,
    "compile": compile_case,
    "regex-compile": regex_compile_case,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--findings", default=",".join(map(str, FINDINGS)))
    args = parser.parse_args()
    FINDINGS[:] = [int(n) for n in args.findings.split(",")]
    print(f"median of {args.runs} runs")
    for name in args.cases.split(","):
        CASES[name](args.runs)


if __name__ == "__main__":
    main()
