"""Sessions over stdio: start_workflow, an agent step answered in a session, resume_session.

    .venv/bin/python bench/sessions.py [--walks 20] [--sessions 10000] [--searches 200]

Measures, against one `workrail-mcp` process over stdio (the SDK's server, our tools):
- start_workflow: p50/p99 of --walks starts of the bundled bug-investigation (11 steps served);
- continue_workflow with a continue token (an agent step answered: checks, the navigator, one
  transaction in the run store): p50/p99 over every step of --walks walks, taking turns with the
  stateless workflow_next of the same step (the same navigator without the store);
- resume_session over a store of --sessions sessions (each with a goal and three steps' notes of
  six words drawn from 8,000, made in process beforehand): p50/p95 of --searches searches by two
  words of one session's last notes, in a server whose run store (DBOS) is open, as it is when a
  store exists.
The walks answer with notes and a loop-control artifact; the workflow's validation criteria are
dropped from the copy walked (placeholder notes would not pass them; what is timed is the same).
Goals (docs/benchmarks.md, Sessions): advance p50 ≤ 21 ms (0.5× upstream's 43 ms); start ≤ upstream's;
resume p95 < 100 ms at 10,000 sessions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_latency import StdioPeer, quantiles  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STOP = [{"kind": "wr.loop_control", "decision": "stop"}]
_SYLLABLES = "ka lo mi ne tur sal bri fen gor hul jex pra qui ros tav wen yol zed dri fla".split()
# 8,000 distinct made-up words: a query of two of a session's words matches a few sessions, as
# the user's own words for a task do (a vocabulary of a dozen words would match them all).
WORDS = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES})


def _workflow(project: Path) -> None:
    definition = json.loads((ROOT / "workflows" / "bug-investigation.json").read_text())

    def drop(steps: list) -> None:
        for step in steps:
            step.pop("validationCriteria", None)
            for key in ("steps", "body"):
                if isinstance(step.get(key), list):
                    drop(step[key])

    drop(definition["steps"])
    (project / "workflows").mkdir(parents=True)
    (project / "workflows" / "bug-investigation.json").write_text(json.dumps(definition))


def _call(peer: StdioPeer, tool: str, arguments: dict) -> dict:
    result = peer.request("tools/call", {"name": tool, "arguments": arguments})
    return result["structuredContent"]


def walks(peer: StdioPeer, project: Path, count: int) -> None:
    starts, advances, stateless = [], [], []
    for n in range(count):
        began = time.perf_counter()
        step = _call(
            peer,
            "start_workflow",
            {"workflowId": "bug-investigation", "workspacePath": str(project), "goal": f"walk {n}"},
        )
        starts.append(time.perf_counter() - began)
        completed: list[str] = []
        context: dict = {"goal": f"walk {n}"}
        while not step["isComplete"]:
            began = time.perf_counter()
            served = _call(
                peer,
                "workflow_next",
                {
                    "workflowId": "bug-investigation",
                    "completedSteps": completed,
                    "context": context,
                    "artifacts": STOP,
                },
            )
            stateless.append(time.perf_counter() - began)
            completed.append(served["step"]["id"])
            context = served["context"]
            began = time.perf_counter()
            step = _call(
                peer,
                "continue_workflow",
                {
                    "continueToken": step["continueToken"],
                    "output": {
                        "notesMarkdown": f"notes of {served['step']['id']}",
                        "artifacts": STOP,
                    },
                },
            )
            advances.append(time.perf_counter() - began)
    for label, times in (
        ("start_workflow", starts),
        ("continue_workflow (session advance)", advances),
        ("workflow_next (stateless, same steps)", stateless),
    ):
        p50, p99 = quantiles(times)
        print(f"{label}: n={len(times)} p50 {p50:.2f} ms p99 {p99:.2f} ms")


def fill_store(home: Path, project: Path, count: int) -> list[str]:
    from workrail_engine.catalog import Catalog, default_sources
    from workrail_engine.sessions import SessionService

    workflow = Catalog(default_sources(project)).served("bug-investigation")
    service = SessionService(home=home / "runs")
    rng = random.Random(7)
    phrases = []
    began = time.perf_counter()
    for n in range(count):
        # started in the project: resume_session finds only the sessions of the caller's workspace
        step = service.start(
            workflow, goal=f"task {n}: {' '.join(rng.sample(WORDS, 3))}", workspace=str(project)
        )
        for _ in range(3):
            words = rng.sample(WORDS, 6)
            step = service.continue_session(
                step.continue_token, notes=f"worked on {' '.join(words)}", artifacts=STOP
            )
        phrases.append(" ".join(words[:2]))
    service.close()
    print(f"store filled: {count} sessions in {time.perf_counter() - began:.1f} s")
    return phrases


def searches(peer: StdioPeer, project: Path, phrases: list[str], count: int) -> None:
    rng = random.Random(11)
    times, hits = [], 0
    for _ in range(count):
        phrase = rng.choice(phrases)
        began = time.perf_counter()
        found = _call(peer, "resume_session", {"workspacePath": str(project), "query": phrase})
        times.append(time.perf_counter() - began)
        hits += all(w in (found["candidates"][0]["lastNotes"] or "") for w in phrase.split())
    ordered = sorted(times)
    p50 = ordered[len(ordered) // 2] * 1000
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000
    print(
        f"resume_session over {len(phrases)} sessions: n={count} p50 {p50:.2f} ms p95 {p95:.2f} ms;"
        f" the session searched for ranked first {hits}/{count}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--walks", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=10000)
    parser.add_argument("--searches", type=int, default=200)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as temp:
        tmp = Path(temp)
        project = tmp / "project"
        _workflow(project)
        env = {**os.environ, "WORKRAIL_HOME": str(tmp / "home")}
        env.pop("WORKRAIL_WORKFLOW_PATH", None)
        env.pop("WORKRAIL_DATABASE_URL", None)
        command = [sys.executable, "-m", "workrail_mcp", "--project", str(project)]
        peer = StdioPeer(command, tmp, env)
        peer.initialize()
        walks(peer, project, args.walks)
        peer.close()
        os.environ["WORKRAIL_HOME"] = str(tmp / "home")
        phrases = fill_store(tmp / "home", project, args.sessions)
        peer = StdioPeer(command, tmp, env)
        peer.initialize()
        searches(peer, project, phrases, args.searches)
        peer.close()
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
