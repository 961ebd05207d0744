"""Benchmark: the CPU of one stdio ``workrail-mcp`` start, fresh against forked (the test suite's cost, docs/benchmarks.md).

The suite starts ≈ 140 servers, and most of a start is importing the MCP SDK. This measures what
a fork server in the tests would save: in turns, (a) ``python -m workrail_mcp --project P`` as
the SDK's client starts it, and (b) ``workrail_mcp.__main__.main(["--project", P])`` in a child
forked from this process, which imported the server once before the first round. Each is fed
one ``initialize`` line, answers it and ends at EOF; its CPU (user + sys) is read from
``getrusage`` of the reaped child (a) or ``wait4`` (b).

    python bench/mcp_forked_start.py [--runs 5]

Prints each round and the medians, with the 1-minute load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.mcp.conftest import INITIALIZE  # noqa: E402 - the tests' own handshake line

LINE = json.dumps(INITIALIZE).encode() + b"\n"


def fresh(project: Path, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "workrail_mcp", "--project", str(project)],
        input=LINE,
        capture_output=True,
        env=env,
        timeout=60,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert b'"result"' in done.stdout, done.stderr[-500:]
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def forked(project: Path, home: Path) -> float:
    from workrail_mcp.__main__ import main

    child_in, to_child = os.pipe()
    from_child, child_out = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the server on these pipes, then out without the parent's exit
        os.dup2(child_in, 0)
        os.dup2(child_out, 1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        for fd in (child_in, to_child, from_child, child_out):
            os.close(fd)
        os.environ["WORKRAIL_HOME"] = str(home)
        code = main(["--project", str(project)])
        sys.stdout.flush()
        os._exit(code or 0)
    os.close(child_in)
    os.close(child_out)
    os.write(to_child, LINE)
    os.close(to_child)
    out = b""
    while chunk := os.read(from_child, 65536):
        out += chunk
    os.close(from_child)
    _, _, usage = os.wait4(pid, 0)
    assert b'"result"' in out, out[-300:]
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        (project / "workflows").mkdir(parents=True)
        env = {**os.environ, "WORKRAIL_HOME": str(home)}
        import workrail_mcp.__main__  # noqa: F401 - imported once, before the first fork
        import workrail_mcp.server  # noqa: F401

        rounds = []
        for n in range(args.runs):
            rounds.append((fresh(project, env), forked(project, home)))
            print(f"round {n + 1}: fresh {rounds[-1][0]:.3f} s, forked {rounds[-1][1]:.3f} s")
    load = os.getloadavg()[0]
    print(
        f"median CPU per start: fresh {statistics.median(r[0] for r in rounds):.3f} s, "
        f"forked {statistics.median(r[1] for r in rounds):.3f} s (1-minute load {load:.2f})"
    )


if __name__ == "__main__":
    main()
