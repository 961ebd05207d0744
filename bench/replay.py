"""Replay of recorded sessions against a workflow, against validating the file once per history.

    .venv/bin/python bench/replay.py [--histories 1000] [--recorded 20] [--repeat 3]

A 20-step workflow (17 prompt steps, some with validation criteria and a runCondition, and a
`for` loop of two steps run twice: 21 answers a session) gets --recorded sessions walked to their
end through `SessionService` (the engine the MCP server calls: checks, navigator, one transaction
each), then copied in the store (new ids, the same rows) up to --histories sessions. Measured, in
CPU seconds of this process (`time.process_time`: less noisy than wall time on a loaded machine),
best of --repeat:
- replay: every history read from the store (`records.read_histories`) and walked again against
  the file as compiled now (`replay_history`) — what `workrail replay` does after start-up;
- validate: the file linted and compiled (`lint_path`, `Catalog.serve_file`) once per history;
and the CPU and wall time of `workrail replay` itself, as a process (start-up included). Goal (issue "Time travel"): a
history's replay costs about as much as validating the file once.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def workflow() -> dict:
    steps: list[dict] = []
    for n in range(1, 18):
        step: dict = {"id": f"step-{n}", "title": f"Step {n}", "prompt": f"Do part {n}."}
        if n % 3 == 0:
            step["validationCriteria"] = [
                {"type": "contains", "value": "done", "message": "Say done"}
            ]
        if n % 5 == 0:
            step["runCondition"] = {"var": "mode", "equals": "full"}
        steps.append(step)
        if n == 10:
            steps.append(
                {
                    "id": "rounds",
                    "type": "loop",
                    "title": "Rounds",
                    "loop": {"type": "for", "count": 2, "maxIterations": 5},
                    "body": [
                        {"id": "round-a", "title": "Round A", "prompt": "First half."},
                        {"id": "round-b", "title": "Round B", "prompt": "Second half."},
                    ],
                }
            )
    return {
        "id": "replay-bench",
        "name": "Replay bench",
        "description": "20 steps: prompts, criteria, conditions, a loop",
        "version": "1.0.0",
        "steps": steps,
    }


def record(home: Path, path: Path, recorded: int) -> None:
    from workrail_engine.catalog import Catalog
    from workrail_engine.sessions import SessionService

    definition = Catalog.default(path.parent.parent, []).serve_file(json.loads(path.read_text()))
    service = SessionService(home=home / "runs")
    for n in range(recorded):
        step = service.start(definition, goal=f"bench {n}", context={"mode": "full"})
        while not step.is_complete:
            step = service.answer(step.run_id, step.attempt, notes=f"done {n}")
    service.close()


def fill(home: Path, recorded: int, histories: int) -> None:
    """Copy the recorded sessions (their rows in every session table) up to ``histories``."""
    conn = sqlite3.connect(home / "runs" / "runs.sqlite")
    ids = [r[0] for r in conn.execute("SELECT run_id FROM workrail_sessions")]
    tables = ("workrail_sessions", "workrail_session_positions", "workrail_answers")
    copies = 0
    while len(ids) + copies < histories:
        source = ids[copies % recorded]
        fresh = f"wf-copy{copies:07d}"
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            chosen = ", ".join("?" if c == "run_id" else c for c in columns)
            conn.execute(
                f"INSERT INTO {table} ({', '.join(columns)}) SELECT {chosen} FROM {table}"
                " WHERE run_id = ?",
                (fresh, source),
            )
        copies += 1
    conn.commit()
    conn.close()


def best(repeat: int, action) -> float:
    times = []
    for _ in range(repeat):
        began = time.process_time()
        action()
        times.append(time.process_time() - began)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--histories", type=int, default=1000)
    parser.add_argument("--recorded", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        home = root / "home"
        project = root / "project"
        (project / "workflows").mkdir(parents=True)
        path = project / "workflows" / "replay-bench.json"
        path.write_text(json.dumps(workflow(), indent=2))
        os.environ["WORKRAIL_HOME"] = str(home)
        began = time.perf_counter()
        record(home, path, args.recorded)
        fill(home, args.recorded, args.histories)
        print(f"store: {args.histories} sessions in {time.perf_counter() - began:.1f} s")

        from workrail_engine.catalog import Catalog
        from workrail_engine.lint import lint_path
        from workrail_engine.replay import replay_history
        from workrail_engine.replay.records import read_histories
        from workrail_engine.runs.history import RunHistory

        catalog = Catalog.default(project, [])
        definition = catalog.serve_file(lint_path(path).document.value)

        def replay_all() -> None:
            reader = RunHistory(home=home / "runs")
            histories = read_histories(reader, ["replay-bench"])
            reader.close()
            assert len(histories) == args.histories
            held = [replay_history(definition, h) for h in histories]
            assert all(r.divergence is None for r in held), held[0]

        def validate_all() -> None:
            for _ in range(args.histories):
                linted = lint_path(path)
                catalog.serve_file(linted.document.value)

        replayed = best(args.repeat, replay_all)
        validated = best(args.repeat, validate_all)
        n = args.histories
        print(f"replay:   {replayed:.2f} s CPU, {replayed / n * 1000:.2f} ms a history")
        print(f"validate: {validated:.2f} s CPU, {validated / n * 1000:.2f} ms a file")
        print(f"replay / validate: {replayed / validated:.2f}")
        began = time.perf_counter()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(
            [sys.executable, "-c", "from workrail_engine.cli import main; main()", "replay"],
            cwd=project,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - began
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime
        print(
            f"`workrail replay` process: {cpu:.2f} s CPU, {wall:.2f} s wall; {out.stdout.strip()}"
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
