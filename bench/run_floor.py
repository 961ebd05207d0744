"""The engine against its floor (docs/runs.md, "The floor of a durable step"; docs/benchmarks.md, Runs).

The floor is a loop that does, for each step, only what the runs' contract needs and nothing of
the engine: the step's token logged before the spawn and its process group after (an
append-only file), the spawn with the executor's options (a process group of its own, a working
directory, an environment, both pipes), both pipes read to their end with ``select.poll``, the
exit waited for, the result as JSON committed to the store before the next spawn — to SQLite
(WAL, ``synchronous=NORMAL``: the journal's settings) or to Postgres (one prepared statement
through libpq, ``synchronous_commit=off``: the journal's settings). Against it, and taking
turns with it in the same process, the engine runs a workflow of ``--steps`` × ``true`` through
`RunService` on the same store, timed from `RunService.run` to `RunService.wait` seeing it end;
and, for reference, the same command spawned bare (``subprocess.run``).

Each store runs in a process of its own (DBOS is one per process): SQLite in a temporary
directory, Postgres on ``--database`` (an empty database) or, without it, on a server started
for the bench (the tests' own, tests/postgres_server.py: the Debian package ``postgresql``).
Each round runs the floor, the engine and the floor again, with the bare loop first on odd
rounds and last on even ones; the round's ratio is the engine's time over the mean of the two
floors around it, which takes out a change of the machine's speed that goes one way through the
round. The second floor over the first — the same work twice, a second apart — is printed too:
the measure's own spread. On the 2-core machine of docs/benchmarks.md it moved a round by up to
± 30 % (0.75–1.31× in 450 rounds; a standard deviation of 0.09), more than the engine's whole
margin to the goal: one round says little, and the median of five moved by ± 0.05 from one run
to the next. The result is the median of ``--repeat`` rounds (fifteen by default), with the
rounds' load (1-minute average). Beside it, the same ratio of this process's CPU time (every
thread's, not the children's): on a machine whose cores are all busy the wall time is mostly
that, and the load moves it less.

With ``--spawn-times`` each round also prints, per side, the median and 90th percentile of the
spawn's kernel part (``subprocess._fork_exec``: the ``vfork`` until the child's ``execve`` lets the
parent go — the same call with the same options on every side). On this 2-core machine it moves
between ≈ 80 µs and 0.5–3 ms from one side's second to the next with the scheduler's placement of
the child (docs/benchmarks.md, Runs): a round whose sides' spawns differ that much measures the
scheduler, not the engine. (Timing it wraps the call: a microsecond more a spawn on every side.)

With ``--server-cpu`` (Postgres on this machine) each round also prints, per side, the CPU the
server's processes of the database spent a step (every backend of it: the journal's or the
floor's, DBOS's), read from ``/proc`` before and after the side — the server's share of a step,
which the run's thread waits for before the next spawn.

    .venv/bin/python bench/run_floor.py [--steps 1000] [--repeat 15] [--stores sqlite postgres]
                                        [--database postgresql://USER@HOST:PORT/DB] [--spawn-times]
                                        [--server-cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

GOAL = 1.15  # the engine's time within this many times the floor's (docs/runs.md, the floor of a durable step)


def bare(argv: list[str], steps: int) -> None:
    for _ in range(steps):
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=True)


class SqliteResults:
    """The floor's commit on SQLite: one INSERT in autocommit (WAL, synchronous=NORMAL)."""

    def __init__(self, directory: Path) -> None:
        self.db = sqlite3.connect(directory / "floor.db", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE results (run TEXT, key TEXT, attempt INT, result TEXT, "
            "PRIMARY KEY (run, key))"
        )

    def commit(self, run_id: str, key: str, result: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, 1, ?)", (run_id, key, result))

    def close(self) -> None:
        self.db.close()


class PostgresResults:
    """The floor's commit on Postgres: a statement prepared once, executed by libpq itself (no
    cursor), in autocommit with ``synchronous_commit=off`` — one round trip a step."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute("SET synchronous_commit = off")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS workrail_floor (run TEXT, key TEXT, attempt INT,"
            " result TEXT, PRIMARY KEY (run, key))"
        )
        self.pgconn = self.conn.pgconn
        self.pgconn.prepare(
            b"floor_result",
            b"INSERT INTO workrail_floor VALUES ($1, $2, 1, $3) ON CONFLICT (run, key)"
            b" DO UPDATE SET result = excluded.result",
        )

    def commit(self, run_id: str, key: str, result: str) -> None:
        from psycopg import pq

        answer = self.pgconn.exec_prepared(
            b"floor_result", [run_id.encode(), key.encode(), result.encode()]
        )
        assert answer.status == pq.ExecStatus.COMMAND_OK, answer.error_message

    def close(self) -> None:
        self.conn.execute("DROP TABLE workrail_floor")
        self.conn.close()


class Floor:
    def __init__(self, directory: Path, results: SqliteResults | PostgresResults) -> None:
        self.directory = directory
        self.results = results
        self.log = os.open(directory / "groups.log", os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        # What the executor gives every step (the same variables as the engine's: `Popen` encodes
        # each one, a few µs a step of `true` for five against three)
        from workrail_engine.runs.workspace import minimal_environment

        self.env = minimal_environment()

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
            self.results.commit(run_id, f"step-{i}", json.dumps(result))
            os.write(self.log, f"-{proc.pid}\n".encode())


_spawns: list[int] = []  # `--spawn-times`: each spawn's `_fork_exec`, in ns, of the side under way


def time_spawns() -> None:
    """Time every `subprocess._fork_exec` from now on, into `_spawns`."""
    fork_exec = subprocess._fork_exec  # type: ignore[attr-defined]

    def timed_fork_exec(*args: Any) -> Any:
        started = time.perf_counter_ns()
        try:
            return fork_exec(*args)
        finally:
            _spawns.append(time.perf_counter_ns() - started)

    subprocess._fork_exec = timed_fork_exec  # type: ignore[attr-defined]


def spawn_times() -> str:
    """The median and 90th percentile of the spawns timed since the last call, in µs."""
    times = sorted(_spawns)
    _spawns.clear()
    if not times:
        return "-"
    return f"{times[len(times) // 2] / 1e3:.0f}/{times[len(times) * 9 // 10] / 1e3:.0f}"


def process_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def timed(work: Callable[[], None]) -> tuple[float, float]:
    """(wall, CPU of this process's threads — not the children's) of ``work()``."""
    cpu, started = process_cpu(), time.perf_counter()
    work()
    return time.perf_counter() - started, process_cpu() - cpu


class ServerCpu:
    """`--server-cpu`: the CPU seconds of the server's processes of the floor's database so far
    (their pids from ``pg_stat_activity``, their times from ``/proc``: a server on this machine)."""

    def __init__(self, results: PostgresResults) -> None:
        self.conn = results.conn
        self.tick = os.sysconf("SC_CLK_TCK")

    def __call__(self) -> float:
        pids = self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        ).fetchall()
        ticks = 0
        for (pid,) in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # ended meanwhile
                continue
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / self.tick


def engine_ratio(times: dict[str, float]) -> float:
    """A round's engine over the mean of the floors before and after it (wall or CPU)."""
    return 2 * times["engine"] / (times["floor"] + times["floor again"])


def one_store(args: argparse.Namespace) -> None:
    """The rounds of one store, in this process; the last line of the output is JSON."""
    from workrail_engine.runs import RunOptions, RunService

    argv = [shutil.which(args.command) or args.command]
    directory = Path(tempfile.mkdtemp(prefix="workrail-floor-"))
    database = args.database if args.store == "postgres" else None
    service = RunService(directory, allow_commands=True, home=directory / "home", database=database)
    service.start()
    results = PostgresResults(database) if database else SqliteResults(directory)
    floor = Floor(directory, results)
    steps = [
        {"id": f"step-{i}", "title": f"step {i}", "run": {"command": argv}}
        for i in range(args.steps)
    ]
    runs = 0

    def engine(count: int) -> None:
        nonlocal runs
        runs += 1
        workflow = {"id": f"floor-{runs}", "name": "floor", "steps": steps[:count]}
        result = service.wait(service.run(workflow, {}, RunOptions()), 3600)
        assert result["status"] == "success" and result["steps_completed"] == count, result

    sides: dict[str, Callable[[], None]] = {
        "bare": lambda: bare(argv, args.steps),
        "floor": lambda: floor.run(f"round-{time.monotonic_ns()}", argv, args.steps),
        "engine": lambda: engine(args.steps),
    }
    floor.run("warm-up", argv, 20)  # caches, the stores' first pages
    engine(20)
    if args.spawn_times:
        time_spawns()
    server_cpu = (
        ServerCpu(results) if args.server_cpu and isinstance(results, PostgresResults) else None
    )
    rounds = []
    for round_ in range(1, args.repeat + 1):
        order = ["floor", "engine", "floor again"]
        order = ["bare", *order] if round_ % 2 else [*order, "bare"]
        measured, spawns, server = {}, {}, {}
        for side in order:
            _spawns.clear()
            before = server_cpu() if server_cpu else 0.0
            measured[side] = timed(sides[side.removesuffix(" again")])
            if server_cpu:
                server[side] = 1e6 * (server_cpu() - before) / args.steps
            spawns[side] = spawn_times()
        wall = {side: measured[side][0] for side in order}
        cpu = {side: 1e6 * measured[side][1] / args.steps for side in order}
        load = os.getloadavg()[0]
        rounds.append({"wall": wall, "cpu": cpu, "server": server, "load": load})
        print(
            f"  {args.store} round {round_} ({' -> '.join(order)}): "
            + ", ".join(f"{side} {wall[side]:.2f} s" for side in order)
            + f"; engine/floor {engine_ratio(wall):.3f}x, floor again/floor "
            f"{wall['floor again'] / wall['floor']:.3f}x; CPU µs/step "
            + ", ".join(f"{side} {cpu[side]:.0f}" for side in order)
            + f" (1-min load {load:.1f})"
            + (
                "; spawn µs median/p90 " + ", ".join(f"{side} {spawns[side]}" for side in order)
                if args.spawn_times
                else ""
            )
            + (
                "; server CPU µs/step " + ", ".join(f"{side} {server[side]:.0f}" for side in order)
                if server
                else ""
            ),
            flush=True,
        )
    service.close()
    results.close()
    shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps({"store": args.store, "rounds": rounds}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15, help="rounds per store (at least 3)")
    parser.add_argument("--command", default="true")
    parser.add_argument(
        "--stores", nargs="+", choices=("sqlite", "postgres"), default=["sqlite", "postgres"]
    )
    parser.add_argument(
        "--database",
        help="an empty Postgres database's URL (default: a server started for the bench)",
    )
    parser.add_argument(
        "--spawn-times",
        action="store_true",
        help="print each side's median and p90 spawn (subprocess._fork_exec) per round",
    )
    parser.add_argument(
        "--server-cpu",
        action="store_true",
        help="Postgres on this machine: print the server's CPU a step per side, per round",
    )
    parser.add_argument("--store", choices=("sqlite", "postgres"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.store:
        one_store(args)
        return
    server: Any = None
    if "postgres" in args.stores and not args.database:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from postgres_server import PostgresServer

        server = PostgresServer()
        args.database = server.new_database()
    summaries: list[tuple[str, list[dict[str, Any]]]] = []
    try:
        for store in args.stores:
            command = [sys.executable, __file__, "--store", store, "--steps", str(args.steps)]
            command += ["--repeat", str(args.repeat), "--command", args.command]
            command += ["--spawn-times"] if args.spawn_times else []
            command += ["--server-cpu"] if args.server_cpu else []
            if store == "postgres":
                command += ["--database", args.database]
            finished = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
            *lines, last = finished.stdout.splitlines()
            print("\n".join(lines), flush=True)
            summaries.append((store, json.loads(last)["rounds"]))
    finally:
        if server is not None:
            server.close()
    print(f"{args.steps} x {args.command}, the median of {args.repeat} rounds:")
    for store, rounds in summaries:
        ratios = [engine_ratio(r["wall"]) for r in rounds]
        itself = [r["wall"]["floor again"] / r["wall"]["floor"] for r in rounds]
        median = statistics.median(ratios)
        print(
            f"  {store:8s} engine/floor {median:.3f}x (rounds {', '.join(f'{x:.3f}' for x in ratios)});"
            f" the floor against itself {statistics.median(itself):.3f}x"
            f" ({min(itself):.3f}-{max(itself):.3f}); floor/bare"
            f" {statistics.median(r['wall']['floor'] / r['wall']['bare'] for r in rounds):.2f}x;"
            f" engine/bare {statistics.median(r['wall']['engine'] / r['wall']['bare'] for r in rounds):.2f}x;"
            f" CPU engine/floor {statistics.median(engine_ratio(r['cpu']) for r in rounds):.2f}x;"
            + (
                " server CPU engine/floor"
                f" {statistics.median(engine_ratio(r['server']) for r in rounds):.2f}x;"
                if rounds[0]["server"]
                else ""
            )
            + f" load {min(r['load'] for r in rounds):.1f}-{max(r['load'] for r in rounds):.1f};"
            f" goal <= {GOAL}x: {'met' if median <= GOAL else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
