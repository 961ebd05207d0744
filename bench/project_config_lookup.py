"""Benchmark: what the language server pays to learn which project configuration applies.

    .venv/bin/python bench/project_config_lookup.py [--rounds 7] [--calls 2000]

The server compares a document's configuration on every look-up of its state (each request), so
``find_config`` must be cheap. A repository with a ``pyproject.toml`` (select, strict,
workflow-dirs, a per-file glob) and a document four folders down: each round times, in CPU time
(``time.process_time``: other sessions' load does not count), ``find_config`` answering from its
per-directory cache (a ``stat`` per file it looked at) and the full search it replaces (every
folder's candidates stat'ed, the TOML table turned into settings again), alternating the two.
Prints the medians per call and the 1-minute load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from workrail_engine.project_config import _search, find_config

CONFIG = """[tool.workrail]
select = ["WR"]
ignore = ["WR6"]
strict = true
workflow-dirs = ["ops/flows"]
[tool.workrail.per-file-ignores]
"workflows/drafts/*" = ["WR1"]
"""


def _cpu_per_call(call: Callable[[], object], calls: int) -> float:
    began = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - began) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / "pyproject.toml").write_text(CONFIG)
        document = root / "a" / "b" / "workflows" / "drafts" / "flow.json"
        document.parent.mkdir(parents=True)
        document.write_text("{}")
        directory = str(document.parent)
        assert find_config(document) == _search(directory)[1]
        cached, searched = [], []
        for _ in range(args.rounds):
            cached.append(_cpu_per_call(lambda: find_config(document), args.calls))
            searched.append(_cpu_per_call(lambda: _search(directory), args.calls))
    load = os.getloadavg()[0]
    print(f"find_config, cached answer: {statistics.median(cached):.1f} us CPU per call")
    print(f"full search (before):       {statistics.median(searched):.1f} us CPU per call")
    print(f"ratio: {statistics.median(searched) / statistics.median(cached):.1f}x; load {load:.2f}")


if __name__ == "__main__":
    main()
