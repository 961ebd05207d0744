"""The floor under the runs' "1,000 × `true`" goal (docs/benchmarks.md, Runs): the least a durable run must do per step.

`bench/runs.py` compares a run of ``--steps`` × ``true`` with spawning them bare
(``subprocess.run``). This measures, against the same bare loop and taking turns with it, a loop
that does only what the runs' contract needs for each step and nothing of the engine: the step's
token logged before the spawn and its process group after (an append-only file), the spawn with
the executor's options (a process group of its own, a working directory, an environment, both
pipes), both pipes read to their end with ``select.poll``, the exit waited for, the result as
JSON committed to SQLite (WAL, ``synchronous=NORMAL``: the journal's settings) before the next
spawn. What the ratio shows is how much of the goal is left for everything else a run does
(conditions, templates, retries, secrets, events, cancel, escapees).

    .venv/bin/python bench/run_floor.py [--steps 1000] [--repeat 5] [--with-store]

``--with-store``: with the run store of `RunService` launched (DBOS and its threads) in the
process, idle, as in `bench/runs.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def bare(argv: list[str], steps: int) -> None:
    for _ in range(steps):
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=True)


class Floor:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.db = sqlite3.connect(directory / "journal.db", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE results (run TEXT, key TEXT, attempt INT, result TEXT, "
            "PRIMARY KEY (run, key))"
        )
        self.log = os.open(directory / "groups.log", os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        self.env = {"PATH": os.environ["PATH"], "HOME": str(directory), "LANG": "C.UTF-8"}

    def run(self, run_id: str, argv: list[str], steps: int) -> None:
        for i in range(steps):
            token = f"{run_id}-{i}"
            os.write(self.log, f"?{token}\n".encode())
            started = time.monotonic()
            proc = subprocess.Popen(
                argv,
                cwd=self.directory,
                env={**self.env, "WORKRAIL_STEP": token},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                close_fds=True,
                process_group=0,
            )
            os.write(self.log, f"+{proc.pid} {token}\n".encode())
            assert proc.stdout is not None and proc.stderr is not None
            out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
            output: dict[int, bytearray] = {out_fd: bytearray(), err_fd: bytearray()}
            poller = select.poll()
            for fd in output:
                poller.register(fd, select.POLLIN)
            open_fds = set(output)
            while open_fds:
                for fd, _ in poller.poll(50):
                    data = os.read(fd, 65536)
                    if data:
                        output[fd] += data
                    else:
                        poller.unregister(fd)
                        open_fds.discard(fd)
            proc.stdout.close()
            proc.stderr.close()
            proc.wait()
            result = {
                "step_name": f"step-{i}",
                "status": "completed" if proc.returncode == 0 else "failed",
                "output": {
                    "exit_code": proc.returncode,
                    "stdout": output[out_fd].decode("utf-8", "replace"),
                    "stderr": output[err_fd][-8192:].decode("utf-8", "replace"),
                    "duration": round(time.monotonic() - started, 4),
                },
                "finished_at": time.time(),
            }
            self.db.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, 1, ?)",
                (run_id, f"step-{i}", json.dumps(result)),
            )
            os.write(self.log, f"-{proc.pid}\n".encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--command", default="true")
    parser.add_argument("--with-store", action="store_true")
    args = parser.parse_args()
    argv = [shutil.which(args.command) or args.command]
    directory = Path(tempfile.mkdtemp(prefix="workrail-floor-"))
    service = None
    if args.with_store:
        from workrail_engine.runs import RunService

        service = RunService(directory, allow_commands=True, home=directory / "home")
        service.start()
    floor = Floor(directory)
    floor.run("warm-up", argv, 10)
    ratios = []
    for round_ in range(1, args.repeat + 1):
        started = time.perf_counter()
        bare(argv, args.steps)
        bare_time = time.perf_counter() - started
        started = time.perf_counter()
        floor.run(f"round-{round_}", argv, args.steps)
        floor_time = time.perf_counter() - started
        ratios.append(floor_time / bare_time)
        print(
            f"  round {round_}: bare {bare_time:.3f} s, the floor {floor_time:.3f} s -> "
            f"{floor_time / bare_time:.2f}x (1-min load {os.getloadavg()[0]:.1f})"
        )
    print(
        f"{args.steps} x {args.command}, the floor: median {statistics.median(ratios):.2f}x "
        "the bare time"
    )
    if service is not None:
        service.close()
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
