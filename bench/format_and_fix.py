"""Benchmark: what `workrail format` and `workrail validate --fix` cost per file, in-process.

    .venv/bin/python bench/format_and_fix.py [--runs 5]

For a small workflow (the size of the bundled ones) and a large one (~0.1 and ~0.7 MB), in JSON
and in YAML, times the engine's ``format_text`` (what `workrail format` and the language
server's formatting run) on unformatted text, and ``fix_text`` (what `workrail validate --fix` and
the language server's "Fix all" run) on text with one safe fix per step (a YAML number where text
belongs; a trailing comma in JSON, one per pass as the JSON parser stops at the first). Prints the
median of RUNS runs and the load average, so the figures can be read against the machine's state.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable

import yaml

from workrail_engine.lint.fixes import fix_text
from workrail_engine.text.formatting import format_text


def _workflow(steps: int) -> dict[str, object]:
    return {
        "id": "bench-flow",
        "name": "Bench",
        "version": "1.0.0",
        "steps": [
            {
                "id": f"step-{i}",
                "title": f"Step {i}",
                "prompt": f"Do the thing number {i} with care, then report what changed.",
                "guidance": ["Keep it small.", "Say why."],
            }
            for i in range(steps)
        ],
    }


def _median(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    print("| workflow | size | format_text | fix_text (fixes) |")
    print("|---|---|---|---|")
    for steps in (60, 6000):
        workflow = _workflow(steps)
        yaml_text = yaml.safe_dump(workflow, sort_keys=False)  # sequences not indented: reformatted
        yaml_fixable = yaml_text.replace("title: Step ", "title: ", 20)  # `title: 7` is a number
        json_text = json.dumps(workflow)
        json_fixable = json_text.replace("]}", ",]}", 3)  # three trailing commas: three passes
        for name, text, fixable, path in (
            ("JSON", json_text, json_fixable, "bench-flow.json"),
            ("YAML", yaml_text, yaml_fixable, "bench-flow.yaml"),
        ):
            assert format_text(text, path) is not None
            fixed = fix_text(fixable, path).fixed_count
            formatting = _median(lambda t=text, p=path: format_text(t, p), args.runs)
            fixing = _median(lambda t=fixable, p=path: fix_text(t, p), args.runs)
            size = f"{len(text.encode()) / 1e6:.2f} MB"
            print(
                f"| {steps} steps, {name} | {size} | {formatting * 1000:.0f} ms |"
                f" {fixing * 1000:.0f} ms ({fixed}) |"
            )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
