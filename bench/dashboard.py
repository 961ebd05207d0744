"""The dashboard's runs page over a store of 10,000 runs (docs/benchmarks.md, Dashboard): server time per page.

    .venv/bin/python bench/dashboard.py [--runs 10000] [--seed-runs 100] [--requests 30]

1. Seeds a temporary store with --seed-runs real runs (`RunService`, DBOS on SQLite: successes,
   failures, skipped steps, a parallel group), then copies their rows — DBOS's status, input and
   state event, and the step journal — under new ids and earlier creation times until the store
   holds --runs runs. Every row is one the real code wrote; only the ids and times differ.
2. Starts `workrail dashboard --port 0` on that store and times --requests GETs of each page:
   the server's own time (its ``Server-Timing`` header: request in → response start) and the
   round trip on loopback. Goal: the runs page under 300 ms server time.
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

PY = sys.executable


def seed(home: Path, runs: int, seed_runs: int) -> None:
    from workrail_engine.runs import RunOptions, RunService

    service = RunService(Path.cwd(), allow_commands=True, home=home)
    service.start()
    shapes = [
        {
            "id": "bench-ok",
            "name": "ok",
            "steps": [
                {"id": "one", "title": "one", "run": {"command": ["true"]}},
                {
                    "id": "maybe",
                    "title": "maybe",
                    "runCondition": {"var": "parameters.go", "equals": True},
                    "run": {"command": ["true"]},
                },
                {
                    "id": "both",
                    "title": "both",
                    "type": "parallel",
                    "steps": [
                        {"id": "a-side", "title": "a", "run": {"command": ["echo", "a"]}},
                        {"id": "b-side", "title": "b", "run": {"command": ["echo", "b"]}},
                    ],
                },
            ],
        },
        {
            "id": "bench-bad",
            "name": "bad",
            "steps": [{"id": "fails", "title": "fails", "run": {"command": ["false"]}}],
        },
    ]
    ids = []
    for n in range(seed_runs):
        ids.append(service.run(shapes[n % 3 == 2], {"go": n % 2 == 0}, RunOptions()))
    for run_id in ids:
        service.wait(run_id, 120)
    service.close()
    copy_runs(home / "runs.sqlite", runs)


def copy_runs(path: Path, target: int) -> None:
    """Copies of the seeded runs' rows under new ids, each copy a day older than the last."""
    db = sqlite3.connect(path)
    originals = [
        r[0]
        for r in db.execute("SELECT workflow_uuid FROM workflow_status WHERE name = 'workrail_run'")
    ]
    tables = {
        "workflow_status": "workflow_uuid",
        "workflow_input": "workflow_uuid",
        "workflow_events": "workflow_uuid",
        "workrail_journal": "run_id",
    }
    columns = {
        table: [row[1] for row in db.execute(f"PRAGMA table_info({table})")] for table in tables
    }
    have, copy = len(originals), 1
    while have < target:
        chosen_ids = originals[: target - have]
        marks = ",".join("?" * len(chosen_ids))
        with db:
            for table, key in tables.items():
                names = [c for c in columns[table] if c != "position"]
                values = [
                    f"{key} || '-c{copy}'"
                    if name == key
                    else f"{name} - {copy * 86_400_000}"
                    if name in ("created_at", "updated_at")
                    else f'"{name}"'
                    for name in names
                ]
                quoted = ", ".join(f'"{n}"' for n in names)
                db.execute(
                    f"INSERT INTO {table} ({quoted}) SELECT {', '.join(values)}"
                    f" FROM {table} WHERE {key} IN ({marks}) ORDER BY rowid",
                    chosen_ids,
                )
        have += len(chosen_ids)
        copy += 1
    db.close()


def timed(client: httpx2.Client, path: str, requests: int) -> tuple[float, float, float]:
    server, trips = [], []
    for _ in range(requests):
        began = time.perf_counter()
        response = client.get(path)
        trips.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, (path, response.status_code)
        server.append(float(re.search(r"dur=([\d.]+)", response.headers["server-timing"]).group(1)))
    ordered = sorted(server)
    return statistics.median(server), ordered[-1], statistics.median(trips)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed-runs", type=int, default=100)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument(
        "--settle", type=float, default=3.0, help="seconds between start and the first request"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        home = Path(temp) / "home"
        os.environ["WORKRAIL_HOME"] = str(home)
        began = time.perf_counter()
        seed(home / "runs", args.runs, args.seed_runs)
        db = sqlite3.connect(home / "runs" / "runs.sqlite")
        count = db.execute(
            "SELECT COUNT(*) FROM workflow_status WHERE name='workrail_run'"
        ).fetchone()[0]
        db.close()
        print(f"store: {count} runs (seeded and copied in {time.perf_counter() - began:.1f} s)")
        process = subprocess.Popen(
            [PY, "-c", "from workrail_engine.cli import main; main()", "dashboard", "--port", "0"],
            cwd=temp,
            env={**os.environ, "WORKRAIL_HOME": str(home)},
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        try:
            url = None
            while url is None:
                line = process.stderr.readline()
                assert line, "the dashboard did not start"
                found = re.search(r"listening on (http://\S+/)", line)
                url = found.group(1) if found else None
            # `workrail dashboard` opens the durable layer (DBOS) in a thread right after it
            # starts listening, for its first cancel: let that settle, as a person's first click
            # would, so it does not land in the page timings.
            time.sleep(args.settle)
            with httpx2.Client(base_url=url, timeout=60) as client:
                first = client.get("/runs")
                cold = float(re.search(r"dur=([\d.]+)", first.headers["server-timing"]).group(1))
                print(
                    f"first request of /runs ({args.settle:g} s after the start; templates not "
                    f"compiled, no run read yet): {cold:.1f} ms server time"
                )
                for path in (
                    "/runs",
                    "/live/runs",
                    "/runs?page=100",
                    "/runs?status=failed",
                    "/runs?workflow=bench-bad",
                    "/runs?status=success&workflow=bench-ok&page=50",
                ):
                    median, worst, trip = timed(client, path, args.requests)
                    print(
                        f"{path:<48} server p50 {median:7.1f} ms  max {worst:7.1f} ms  "
                        f"round trip p50 {trip:7.1f} ms  ({args.requests} requests)"
                    )
        finally:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
