"""MCP server latency: cold start and tool round trips over stdio, against a floor server.

    .venv/bin/python bench/mcp_latency.py [--calls 2000] [--starts 10] [--catalog 10000]

Measures, in one run:
- cold start (spawn → initialize result) of `workrail-mcp` and of a floor server (the same SDK
  serving one empty tool), median of --starts spawns;
- p50/p99 of --calls sequential `workflow_next` calls vs the floor's empty call;
- p50/p99 of `workflow_list` over a catalog of --catalog workflows, once warm, as `tools/call`
  and as the specs' direct method.
- the same workflow_list in process: the server's own work for the call (argument validation,
  the tool, the result with its JSON text), without the SDK's transport serialization.
- `workflow_next` over Streamable HTTP (`--transport http`, a store of 10,000 runs), in
  alternating blocks: with nobody looking at the dashboard, and with four dashboard tabs loading
  it (the live runs table every 1 s twice, the runs page and a workflow page every 0.5 s) —
  the dashboard must not move the p50.
Goals (docs/benchmarks.md, The MCP server): workflow_next p50 ≤ 1.3× floor; cold start ≤ 1.2× floor; workflow_list p50 < 20 ms.
The cold-start goal (docs/benchmarks.md): workflow_next p50 and cold start ≤ 1.1× floor (`--only-stdio` measures just
those two).

Our packages' bytecode is compiled first, as installing the wheel does: the SDK under the floor
was compiled by pip, and with PYTHONDONTWRITEBYTECODE set (as in CI containers) our modules would
otherwise be compiled from source at every spawn — a cost no installed server pays.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


class StdioPeer:
    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
        )
        self.next_id = 1
        # Per request: (seconds until the answer line was read, seconds the client spent parsing it).
        self.splits: list[tuple[float, float]] = []

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        request_id, self.next_id = self.next_id, self.next_id + 1
        sent = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            read = time.perf_counter()
            reply = json.loads(line)
            self.splits.append((read - sent, time.perf_counter() - read))
            if reply.get("id") == request_id:
                if "error" in reply or reply["result"].get("isError"):
                    raise RuntimeError(str(reply)[:500])
                return reply["result"]

    def initialize(self) -> None:
        self.send(INIT)
        json.loads(self.process.stdout.readline())
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


def cold_starts(
    commands: list[list[str]],
    cwd: Path,
    env: dict[str, str],
    starts: int,
    first_calls: list[tuple[str, dict]] | None = None,
) -> list[float]:
    """Median spawn → initialize result per command, the commands taking turns (load hits all alike).

    With ``first_calls`` (one `tools/call` params per command), also the medians of the next two
    answers of each fresh server: `tools/list`, then that first call (printed), so that work moved
    past `initialize` would show there.
    """
    times: list[list[float]] = [[] for _ in commands]
    after: list[list[tuple[float, float]]] = [[] for _ in commands]
    for _ in range(starts):
        for n, command in enumerate(commands):
            began = time.perf_counter()
            peer = StdioPeer(command, cwd, env)
            peer.initialize()
            times[n].append(time.perf_counter() - began)
            if first_calls is not None:
                listed = time.perf_counter()
                peer.request("tools/list", {})
                called = time.perf_counter()
                peer.request(*first_calls[n])
                after[n].append((called - listed, time.perf_counter() - called))
            peer.close()
    if first_calls is not None:
        for n, (tool, params) in enumerate(first_calls):
            lists, calls = zip(*after[n], strict=True)
            name = tool if tool != "tools/call" else params["name"]
            print(
                f"  after initialize: tools/list {statistics.median(lists) * 1000:.1f} ms, then the "
                f"first {name} {statistics.median(calls) * 1000:.1f} ms (medians)"
            )
    return [statistics.median(t) for t in times]


def interleaved_round_trips(calls: int, *targets: tuple[StdioPeer, str, dict]) -> list[list[float]]:
    """Sequential calls, one to each target in turn, each timed on its own."""
    for peer, method, params in targets:
        for _ in range(50):  # warm up
            peer.request(method, params)
    times: list[list[float]] = [[] for _ in targets]
    for _ in range(calls):
        for n, (peer, method, params) in enumerate(targets):
            began = time.perf_counter()
            peer.request(method, params)
            times[n].append(time.perf_counter() - began)
    return times


def round_trips(peer: StdioPeer, method: str, params: dict, calls: int) -> list[float]:
    return interleaved_round_trips(calls, (peer, method, params))[0]


def quantiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return ordered[len(ordered) // 2] * 1000, ordered[
        min(len(ordered) - 1, int(len(ordered) * 0.99))
    ] * 1000


def write_catalog(directory: Path, count: int) -> None:
    directory.mkdir(parents=True)
    for n in range(count):
        workflow = {
            "id": f"bench-{n:05d}",
            "name": f"Bench workflow {n}",
            "description": "Generated for the benchmark",
            "version": "1.0.0",
            "category": "development",
            "steps": [{"id": "only-step", "title": "Only step", "prompt": "Do it."}],
        }
        (directory / f"bench-{n:05d}.json").write_text(json.dumps(workflow))


def in_process_workflow_list(directory: Path, calls: int) -> None:
    """The server's own work for a `tools/call` of workflow_list (validation, tool, result), no transport."""
    import anyio

    from workrail_engine.catalog import Catalog, Source
    from workrail_mcp.tools import ALL_SPECS, ToolEnv, ToolRegistry

    registry = ToolRegistry(ToolEnv(Catalog([Source("project", directory)], rescan_interval=3600)))
    for spec in ALL_SPECS:
        registry.add(spec)

    async def run() -> list[float]:
        await registry.call_tool("workflow_list", {})  # first scan
        times = []
        for _ in range(calls):
            began = time.perf_counter()
            await registry.call_tool("workflow_list", {})
            times.append(time.perf_counter() - began)
        return times

    p50, p99 = quantiles(anyio.run(run))
    print(
        f"workflow_list over {len(list(directory.iterdir()))} workflows, in process "
        f"(tools/call work without transport, {calls} calls, warm): p50 {p50:.3f} ms p99 {p99:.3f} ms"
    )


def _http_call(client, session: str | None, message: dict) -> tuple[dict | None, str | None]:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if session:
        headers["mcp-session-id"] = session
    response = client.post("/mcp", json=message, headers=headers)
    response.raise_for_status()
    session = response.headers.get("mcp-session-id", session)
    text = response.text
    for line in text.splitlines():
        if line.startswith("data:"):
            return json.loads(line[5:]), session
    return (json.loads(text) if text.strip() else None), session


def http_with_dashboard(tmp: Path, env: dict[str, str], calls: int, block: int = 100) -> None:
    """workflow_next p50 over HTTP, quiet blocks and blocks with four polling dashboard tabs, taking
    turns; the store holds 10,000 runs (as in bench/dashboard.py), so the tabs read real pages."""
    import re
    import threading

    import httpx2
    from dashboard import seed  # bench/dashboard.py, beside this file

    seed(Path(env["WORKRAIL_HOME"]) / "runs", 10_000, 100)

    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workrail_mcp",
            "--project",
            str(tmp / "small"),
            "--transport",
            "http",
            "--port",
            "0",
        ],
        cwd=tmp,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = None
        while base is None:
            line = process.stderr.readline()
            assert line, "the HTTP server did not start"
            found = re.search(r"listening on (http://\S+)/mcp", line)
            base = found.group(1) if found else None
        with httpx2.Client(base_url=base, timeout=30) as client:
            _, session = _http_call(client, None, INIT)
            _http_call(client, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "workflow_next",
                    "arguments": {"workflowId": "coding-task", "completedSteps": []},
                },
            }
            for _ in range(50):
                _http_call(client, session, call)
            polling = threading.Event()
            stop = threading.Event()
            polls = [0]

            def tab(path: str, every: float) -> None:
                with httpx2.Client(base_url=base, timeout=30) as browser:
                    while not stop.is_set():
                        if polling.is_set():
                            browser.get(path, headers={"Accept": "text/html"})
                            polls[0] += 1
                        stop.wait(every)

            tabs = [
                threading.Thread(target=tab, args=(path, every), daemon=True)
                for path, every in (
                    ("/live/runs", 1.0),
                    ("/live/runs", 1.0),
                    ("/runs", 0.5),
                    ("/workflows/coding-task", 0.5),
                )
            ]
            for thread in tabs:
                thread.start()
            quiet, busy = [], []
            for n in range(max(calls // block, 2)):
                watched = n % 2 == 1
                (polling.set if watched else polling.clear)()
                for _ in range(block):
                    began = time.perf_counter()
                    _http_call(client, session, call)
                    (busy if watched else quiet).append(time.perf_counter() - began)
            stop.set()
            for thread in tabs:
                thread.join()
        (q50, q99), (b50, b99) = quantiles(quiet), quantiles(busy)
        print(
            f"workflow_next over HTTP ({len(quiet)} + {len(busy)} calls in alternating blocks of {block}): "
            f"dashboard idle p50 {q50:.2f} ms p99 {q99:.2f} ms; four dashboard tabs polling "
            f"({polls[0]} page loads) p50 {b50:.2f} ms p99 {b99:.2f} ms; p50 ratio {b50 / q50:.2f}"
        )
    finally:
        process.terminate()
        process.wait(10)


def compile_bytecode() -> None:
    """Our packages' .pyc files, as `pip install` writes them for the SDK (see the docstring)."""
    # The test session's own step (tests/suite_bytecode.py), so both check `.pyc` files alike.
    sys.path.insert(0, str(ROOT / "tests"))
    from suite_bytecode import compile_the_packages

    compile_the_packages()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--catalog", type=int, default=10000)
    parser.add_argument(
        "--only-http",
        action="store_true",
        help="only the HTTP workflow_next with and without the dashboard",
    )
    parser.add_argument(
        "--only-stdio",
        action="store_true",
        help="only the cold start and workflow_next over stdio (the cold-start goals)",
    )
    args = parser.parse_args()
    compile_bytecode()
    with tempfile.TemporaryDirectory() as temp:
        tmp = Path(temp)
        env = {**os.environ, "WORKRAIL_HOME": str(tmp / "home")}
        env.pop("WORKRAIL_WORKFLOW_PATH", None)
        (tmp / "small").mkdir()
        ours = [sys.executable, "-m", "workrail_mcp", "--project", str(tmp / "small")]
        floor = [sys.executable, str(ROOT / "bench" / "_mcp_floor_server.py")]
        if args.only_http:
            http_with_dashboard(tmp, env, args.calls)
            return

        next_call = {
            "name": "workflow_next",
            "arguments": {"workflowId": "coding-task", "completedSteps": []},
        }
        start_ours, start_floor = cold_starts(
            [ours, floor],
            tmp,
            env,
            args.starts,
            first_calls=[
                ("tools/call", next_call),
                ("tools/call", {"name": "empty", "arguments": {}}),
            ],
        )
        print(
            f"cold start (median of {args.starts}, taking turns): workrail-mcp {start_ours * 1000:.0f} ms, "
            f"floor {start_floor * 1000:.0f} ms, ratio {start_ours / start_floor:.2f}"
        )

        our_peer, floor_peer = StdioPeer(ours, tmp, env), StdioPeer(floor, tmp, env)
        our_peer.initialize()
        floor_peer.initialize()
        next_times, empty_times = interleaved_round_trips(
            args.calls,
            (our_peer, "tools/call", next_call),
            (floor_peer, "tools/call", {"name": "empty", "arguments": {}}),
        )
        our_peer.close()
        floor_peer.close()
        (n50, n99), (e50, e99) = quantiles(next_times), quantiles(empty_times)
        print(
            f"{args.calls} sequential calls each (taking turns): workflow_next p50 {n50:.2f} ms p99 {n99:.2f} ms; "
            f"floor empty p50 {e50:.2f} ms p99 {e99:.2f} ms; p50 ratio {n50 / e50:.2f}"
        )
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
        if args.only_stdio:
            return
        http_with_dashboard(tmp, env, args.calls)

        write_catalog(tmp / "big" / "workflows", args.catalog)
        in_process_workflow_list(tmp / "big" / "workflows", calls=200)
        peer = StdioPeer(
            [sys.executable, "-m", "workrail_mcp", "--project", str(tmp / "big")], tmp, env
        )
        peer.initialize()
        listed = peer.request("workflow_list", {})
        assert len(listed["workflows"]) >= args.catalog, len(listed["workflows"])
        calls = max(50, args.calls // 20)
        for label, method, params in (
            ("tools/call", "tools/call", {"name": "workflow_list", "arguments": {}}),
            ("direct", "workflow_list", {}),
        ):
            peer.splits.clear()
            p50, p99 = quantiles(round_trips(peer, method, params, calls))
            answered, _ = quantiles([answer for answer, _ in peer.splits])
            parsed, _ = quantiles([parse for _, parse in peer.splits])
            print(
                f"workflow_list over {len(listed['workflows'])} workflows ({label}, {calls} calls, warm): "
                f"p50 {p50:.2f} ms p99 {p99:.2f} ms; of which request → answer read p50 {answered:.2f} ms, "
                f"client json.loads p50 {parsed:.2f} ms"
            )
        peer.close()


if __name__ == "__main__":
    main()
