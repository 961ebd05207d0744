"""The dashboard's workflows page over invalid files (docs/security.md, The dashboard): server time and page size.

    .venv/bin/python bench/dashboard_invalid_files.py [--steps 60000] [--requests 10]
        [--python PATH]

Writes a temporary project whose ``workflows/`` holds one file with --steps steps that each lack
their title and prompt (an error or more per step), and a sparse 1 GiB file; starts
``workrail dashboard --port 0`` on it (with --python, another checkout's interpreter: the code
before a change) and GETs ``/workflows`` --requests times. The first request also pays for the
catalog's first scan and lint of the files; the others show what a page costs by itself. Server
time is the dashboard's own ``Server-Timing`` header (request in → response start).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2


def project(root: Path, steps: int) -> None:
    flows = root / "workflows"
    flows.mkdir(parents=True)
    many = {"id": "many-errors", "name": "Many", "steps": [{"id": 5}] * steps}
    (flows / "many-errors.json").write_text(json.dumps(many))
    with open(flows / "huge.json", "wb") as sparse:
        sparse.truncate(1 << 30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60_000)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project(root / "project", args.steps)
        size = (root / "project" / "workflows" / "many-errors.json").stat().st_size
        env = {**os.environ, "WORKRAIL_HOME": str(root / "home")}
        env.pop("WORKRAIL_HTTP_TOKEN", None)
        server = subprocess.Popen(
            [args.python, "-c", "from workrail_engine.cli import main; main()"]
            + ["dashboard", "--port", "0"],
            cwd=root / "project",
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            url = None
            while url is None:
                line = server.stderr.readline()
                if not line:
                    raise SystemExit(f"the dashboard exited ({server.poll()})")
                found = re.search(r"listening on (http://\S+/)", line)
                url = found.group(1) if found else None
            times, sizes = [], []
            with httpx2.Client(timeout=1800) as client:
                for _ in range(args.requests):
                    began = time.perf_counter()
                    page = client.get(url + "workflows")
                    round_trip = (time.perf_counter() - began) * 1000
                    timing = re.search(r"dur=([\d.]+)", page.headers.get("server-timing", ""))
                    times.append((float(timing.group(1)) if timing else round_trip, round_trip))
                    sizes.append(len(page.content))
        finally:
            server.terminate()
            server.wait(30)
            server.stderr.close()
    load = os.getloadavg()[0]
    first, rest = times[0], [t for t, _ in times[1:]]
    print(f"file: {args.steps:,} steps, {size / 1024:.0f} KiB; sparse 1 GiB file; load {load:.1f}")
    print(f"first request (with the catalog's first scan): {first[0]:.1f} ms server")
    if rest:
        print(
            f"later requests: server p50 {statistics.median(rest):.1f} ms, "
            f"max {max(rest):.1f} ms; page {sizes[-1]:,} bytes"
        )


if __name__ == "__main__":
    main()
