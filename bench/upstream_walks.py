"""Upstream's 42 workflows walked side by side: upstream WorkRail v3.121.0 and ours.

    .venv/bin/python bench/upstream_walks.py --upstream /tmp/upstream-v3.121.0 \\
        [--workflow ID ...] [--record] [--table FILE]

``--upstream`` is upstream's repository at v3.121.0, built (``npm install --ignore-scripts``,
``npx tsc -p tsconfig.build.json``). Both servers serve that folder's ``workflows/`` (upstream
bundles them; ours is ``workrail-mcp --tools upstream --workflows <upstream>/workflows``) and
each workflow is walked twice on each (the ``notes`` and ``rails`` walks of
tests/mcp/upstream_walks.py: the same scripted answers, read from the workflow files). Prints one
row per walk — upstream's ending, ours, and whether they match (the same steps answered in the
same order, the same ending, the same blocker codes at the same step) — then the counts.

``--record`` writes upstream's endings to tests/fixtures/upstream_sessions/walk_endings.json,
which tests/mcp/test_upstream_walks.py checks ours against without node. Exit status 1 when an
ending differs and is not listed in the walker's ``DOCUMENTED`` (docs/compatibility.md says why each is).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sessions_vs_upstream import ours_command, ours_env, upstream_env  # noqa: E402

from tests.mcp.upstream_walks import DOCUMENTED, SdkCaller, summary, walk_all  # noqa: E402

RECORDED = ROOT / "tests" / "fixtures" / "upstream_sessions" / "walk_endings.json"


async def endings_of(
    command: list[str], env: dict[str, str], folder: Path, work: Path, only: set[str] | None
) -> dict[str, dict[str, Any]]:
    from mcp import Client, StdioServerParameters

    workspace = tempfile.mkdtemp(prefix="walk-", dir=work)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=workspace)
    async with Client(params) as client:
        return await walk_all(SdkCaller(client), folder, workspace, only)


def compare(
    theirs: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]]
) -> list[tuple[str, str, str, str]]:
    """(walk, upstream's ending, ours, match | documented | DIFFERS) per walk."""
    rows = []
    for key in sorted(theirs):
        same = theirs[key] == ours.get(key)
        verdict = "match" if same else ("documented" if key in DOCUMENTED else "DIFFERS")
        mine = summary(ours[key]) if key in ours else "not walked"
        rows.append((key, summary(theirs[key]), mine, verdict))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", type=Path, required=True)
    parser.add_argument("--workflow", action="append", help="walk only these ids")
    parser.add_argument("--record", action="store_true", help=f"write {RECORDED.name}")
    parser.add_argument("--table", type=Path, help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    folder = args.upstream / "workflows"
    only = set(args.workflow) if args.workflow else None
    with tempfile.TemporaryDirectory(prefix="bench-walks-") as tmp:
        work = Path(tmp)
        (work / "project" / "workflows").mkdir(parents=True)
        node = ["node", str(args.upstream / "dist" / "mcp-server.js")]
        theirs = asyncio.run(endings_of(node, upstream_env(work / "up"), folder, work, only))
        mine = ours_command(work / "project", args.upstream)
        ours = asyncio.run(endings_of(mine, ours_env(work / "home"), folder, work, only))
    rows = compare(theirs, ours)
    lines = ["| walk | upstream v3.121.0 | ours (`--tools upstream`) | |", "|---|---|---|---|"]
    lines += [f"| {key} | {up} | {me} | {verdict} |" for key, up, me, verdict in rows]
    counts = {v: sum(1 for *_, verdict in rows if verdict == v) for v in ("match", "documented")}
    differs = len(rows) - sum(counts.values())
    lines.append(
        f"\n{len(rows)} walks: {counts['match']} match, {counts['documented']} documented, "
        f"{differs} differ."
    )
    table = "\n".join(lines)
    print(table)
    if args.table:
        args.table.write_text(table + "\n", encoding="utf-8")
    if args.record:
        RECORDED.write_text(json.dumps(theirs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 1 if differs else 0


if __name__ == "__main__":
    os.environ.pop("WORKRAIL_TOOLS", None)
    sys.exit(main())
