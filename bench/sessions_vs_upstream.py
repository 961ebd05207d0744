"""Sessions, side by side with upstream WorkRail built from its source.

    .venv/bin/python bench/sessions_vs_upstream.py --upstream UPSTREAM_CHECKOUT \\
        [--sessions 20] [--workflow wr.presentation-creation] [--resume-store 10000]

Both servers run over stdio at once and take turns, one whole session each (so a change in the
machine's load touches both alike); each is driven with JSON-RPC lines (`tools/call`), the answer
line read back, timed by the client:
- ``start_workflow`` (the session's first step);
- an agent step answered: ``continue_workflow`` with notes, applied (kind ok), for every step
  of the workflow — upstream's own workflow ``--workflow``, served to ours from upstream's
  ``workflows/`` folder so both walk the same steps. Upstream's injected onboarding step (an
  advance without notes, before the workflow's first step) is not counted.
Ours is ``workrail-mcp --tools upstream`` on a fresh SQLite store; upstream has a fresh data
directory, JSON responses, its console off.

Then ``resume_session`` over ``--resume-store`` sessions: a store seeded in process (the
`SessionService`, each session with a goal and notes of its own), served by a new
``workrail-mcp --tools upstream`` process (measured after a 10 s settle: a server that finds a
store runs its recovery scan right after the handshake); p50/p95 of 200 searches by a phrase
from one session's notes, cycling through different sessions (all 10,000 share the workspace,
so every one is eligible and ranked).

Goals (docs/benchmarks.md, Sessions): step answered p50 ≤ 0.5× upstream's; start_workflow p50 ≤ upstream's;
resume_session p95 < 100 ms over 10,000 sessions. Results: docs/benchmarks.md. (bench/sessions.py
measures ours alone: advance vs workflow_next, resume with a vocabulary of 8,000 words.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from mcp_latency import StdioPeer  # noqa: E402

SETTLE_SECONDS = 10
NOTES = "## What I did\n- Worked through the step.\n## What I produced\n- Notes for the record."


class SessionPeer(StdioPeer):
    """A stdio server whose tools answer with JSON in their first text block."""

    def tool(self, name: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        began = time.perf_counter()
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        took = time.perf_counter() - began
        return took, json.loads(result["content"][0]["text"])


def walk(peer: SessionPeer, workflow: str, workspace: str, n: int) -> tuple[float, list[float]]:
    """One session: (start seconds, [seconds per step answered with notes])."""
    start_s, state = peer.tool(
        "start_workflow",
        {"workflowId": workflow, "workspacePath": workspace, "goal": f"bench session {n}"},
    )
    steps: list[float] = []
    while not state["isComplete"]:
        if state["pending"]["stepId"] == "wr-system-onboarding":  # upstream's, not the workflow's
            _, state = peer.tool(
                "continue_workflow", {"continueToken": state["continueToken"], "intent": "advance"}
            )
            continue
        took, state = peer.tool(
            "continue_workflow",
            {
                "continueToken": state["continueToken"],
                "output": {"notesMarkdown": NOTES},
                "workspacePath": workspace,
            },
        )
        if state.get("kind") != "ok":
            raise RuntimeError(f"advance not applied: {json.dumps(state)[:400]}")
        steps.append(took)
    return start_s, steps


def upstream_env(data: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(data),
        "WORKRAIL_DATA_DIR": str(data / "data"),
        "WORKRAIL_JSON_RESPONSES": "true",
        "WORKRAIL_ENABLE_SESSION_TOOLS": "false",
        "WORKFLOW_INCLUDE_USER": "false",
        "WORKFLOW_INCLUDE_PROJECT": "false",
    }


def ours_command(project: Path, upstream: Path) -> list[str]:
    return [
        str(Path(sys.executable).parent / "workrail-mcp"),
        "--tools",
        "upstream",
        "--project",
        str(project),
        "--workflows",
        str(upstream / "workflows"),
    ]


def ours_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKRAIL_")}
    env["WORKRAIL_HOME"] = str(home)
    return env


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def side_by_side(upstream: Path, workflow: str, sessions: int, work: Path) -> dict[str, Any]:
    (work / "project" / "workflows").mkdir(parents=True)
    theirs = SessionPeer(
        ["node", str(upstream / "dist" / "mcp-server.js")], work, upstream_env(work / "up")
    )
    ours = SessionPeer(ours_command(work / "project", upstream), work, ours_env(work / "home"))
    figures: dict[str, dict[str, list[float]]] = {
        "upstream": {"start": [], "step": []},
        "ours": {"start": [], "step": []},
    }
    try:
        for peer in (theirs, ours):
            peer.initialize()
            walk(peer, workflow, str(work), -1)  # warm-up: the first call compiles and opens
        for n in range(sessions):
            for name, peer in (("upstream", theirs), ("ours", ours)):
                start_s, steps = walk(peer, workflow, str(work), n)
                figures[name]["start"].append(start_s)
                figures[name]["step"] += steps
    finally:
        theirs.close()
        ours.close()
    return {
        side: {
            kind: {
                "n": len(values),
                "p50_ms": round(statistics.median(values) * 1000, 1),
                "p95_ms": round(pct(values, 0.95) * 1000, 1),
            }
            for kind, values in kinds.items()
        }
        for side, kinds in figures.items()
    }


WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar "
    "papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basalt cobalt "
    "dune ember fjord granite harbor iris jade kelp lagoon marble nectar onyx pebble quartz reef"
).split()


def seed(home: Path, count: int) -> list[str]:
    """``count`` sessions with a goal and one answered step each; the phrases to search for."""
    import workrail_engine.runs  # noqa: F401  (before sessions: sessions ↔ runs import each other)
    from workrail_engine.catalog import Catalog
    from workrail_engine.sessions import SessionService

    os.environ["WORKRAIL_HOME"] = str(home)
    catalog = Catalog.default(project_dir=home)
    definition = catalog.served("ai-task-implementation")
    service = SessionService(home=home / "runs")
    rng = random.Random(19)
    phrases = []
    for n in range(count):
        words = rng.sample(WORDS, 3)
        phrase = f"{words[0]}-{n} {words[1]} {words[2]}"
        step = service.start(
            definition, goal=f"task {n}: {' '.join(rng.sample(WORDS, 4))}", workspace=str(home)
        )
        notes = f"## Requirements\n1. {phrase}\n## Affected files\n- a.py\n## Assumptions\n- none"
        service.continue_session(step.continue_token, notes=notes)
        phrases.append(phrase)
    service.close()
    return phrases


def resume_over(store_size: int, work: Path, upstream: Path) -> dict[str, Any]:
    home = work / "resume-home"
    began = time.perf_counter()
    phrases = seed(home, store_size)
    seeded = time.perf_counter() - began
    (work / "resume-project" / "workflows").mkdir(parents=True)
    peer = SessionPeer(ours_command(work / "resume-project", upstream), work, ours_env(home))
    times: list[float] = []
    hits = 0
    try:
        peer.initialize()
        # A server that finds a store starts its recovery scan of it (DBOS) in the background
        # right after the handshake: measured once that start-up work is over, as an agent
        # resuming a session meets a server that has been up for a while.
        time.sleep(SETTLE_SECONDS)
        for _ in range(5):
            peer.tool("resume_session", {"workspacePath": str(home), "query": "warm up"})
        for n in range(200):
            phrase = phrases[(n * 7919) % len(phrases)]
            took, found = peer.tool("resume_session", {"workspacePath": str(home), "query": phrase})
            times.append(took)
            first = found["candidates"][0] if found["candidates"] else {}
            hits += phrase.split()[0] in (first.get("snippet") or "")
    finally:
        peer.close()
    return {
        "sessions": store_size,
        "seed_seconds": round(seeded, 1),
        "searches": len(times),
        "found_first": hits,
        "p50_ms": round(statistics.median(times) * 1000, 1),
        "p95_ms": round(pct(times, 0.95) * 1000, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", type=Path, required=True, help="upstream built from source")
    parser.add_argument("--workflow", default="wr.presentation-creation")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--resume-store", type=int, default=10000)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as tmp:
        work = Path(tmp)
        walked = side_by_side(args.upstream, args.workflow, args.sessions, work)
        load_mid = os.getloadavg()
        resumed = resume_over(args.resume_store, work, args.upstream) if args.resume_store else None
    report = {
        "workflow": args.workflow,
        "sessions_each": args.sessions,
        "walk": walked,
        "step_ratio_p50": round(
            walked["ours"]["step"]["p50_ms"] / walked["upstream"]["step"]["p50_ms"], 2
        ),
        "start_ratio_p50": round(
            walked["ours"]["start"]["p50_ms"] / walked["upstream"]["start"]["p50_ms"], 2
        ),
        "resume": resumed,
        "load_1_5_15": {"before": load_before, "after_walk": load_mid, "end": os.getloadavg()},
        "cpus": os.cpu_count(),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
