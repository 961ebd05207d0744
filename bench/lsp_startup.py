"""Benchmark: how long the language server takes from process start to answering ``initialize``.

Three processes, started in turns so that load changes hit them alike, each timed from spawn:
- ``import lsprotocol.types`` alone, then exit (the floor for any pygls server);
- a bare ``pygls.lsp.server.LanguageServer`` with no features, until it answers ``initialize``;
- ``python -m workrail_lsp``, until it answers ``initialize``.

    python bench/lsp_startup.py [--runs 7]

Prints the median and the best of each, and ours minus the floor (goal: within 0.1 s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

BARE_PYGLS = "from pygls.lsp.server import LanguageServer\nLanguageServer('bare', '1').start_io()\n"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"processId": None, "rootUri": None, "capabilities": {}},
}


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def until_initialized(command: list[str]) -> tuple[float, float]:
    """Seconds from spawn to the complete ``initialize`` response on stdout, and the CPU seconds
    the process used by then (it is idle once it has answered, until it is killed)."""
    began = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(_frame(INITIALIZE))
    process.stdin.flush()
    length = 0
    while line := process.stdout.readline().strip():
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    response = json.loads(process.stdout.read(length))
    elapsed = time.perf_counter() - began
    assert response.get("id") == 1 and "result" in response, response
    process.kill()
    return elapsed, _cpu_seconds(process)


def until_exit(command: list[str]) -> tuple[float, float]:
    began = time.perf_counter()
    process = subprocess.Popen(command)
    cpu = _cpu_seconds(process)
    return time.perf_counter() - began, cpu


def _cpu_seconds(process: subprocess.Popen[bytes]) -> float:
    # CPU time varies far less than wall time on a machine other processes load.
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def main(runs: int) -> None:
    cases = {
        "import lsprotocol.types": lambda: until_exit(
            [sys.executable, "-c", "import lsprotocol.types"]
        ),
        "bare pygls server → initialize": lambda: until_initialized(
            [sys.executable, "-c", BARE_PYGLS]
        ),
        "workrail-lsp → initialize": lambda: until_initialized(
            [sys.executable, "-m", "workrail_lsp"]
        ),
    }
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, measure in cases.items():
            elapsed, used = measure()
            wall[name].append(elapsed * 1000)
            cpu[name].append(used * 1000)
    print(f"runs: {runs}; load average {os.getloadavg()[0]:.2f}\n")
    print("| process | wall median | wall best | CPU median | CPU best |\n|---|---|---|---|---|")
    for name in cases:
        print(
            f"| {name} | {statistics.median(wall[name]):.0f} ms | {min(wall[name]):.0f} ms "
            f"| {statistics.median(cpu[name]):.0f} ms | {min(cpu[name]):.0f} ms |"
        )
    for label, figures in (("wall", wall), ("CPU", cpu)):
        floor, ours = figures["import lsprotocol.types"], figures["workrail-lsp → initialize"]
        bare = figures["bare pygls server → initialize"]
        # Each round starts the three processes one after the other: the difference within a
        # round sees the same load, so its median says more than the difference of medians.
        over_floor = statistics.median(o - f for o, f in zip(ours, floor, strict=True))
        over_bare = statistics.median(o - b for o, b in zip(ours, bare, strict=True))
        print(
            f"\n{label}: workrail-lsp over lsprotocol alone: median of the rounds' differences "
            f"{over_floor:.0f} ms, best {min(ours) - min(floor):.0f} ms (goal ≤ 100 ms); over a "
            f"bare pygls server: {over_bare:.0f} ms, best {min(ours) - min(bare):.0f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    main(parser.parse_args().runs)
