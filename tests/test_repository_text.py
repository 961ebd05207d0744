"""The repository's text speaks of what things are: no tracker's issue numbers and no absolute
paths of the machine a thing was written on (docs, benches, code, tests, editors)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[1]

# the word for a tracker's work item followed by its number; paths of scratch checkouts and
# worktrees
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
MACHINE_PATH = re.compile(r"/work/(?:main|wt)\b|/tmp/(?:vs|ef|pj)/")
# upstream's workflow files are fixtures as upstream wrote them; the changelog may name releases
LEFT_AS_WRITTEN = ("tests/fixtures/", "CHANGELOG.md")


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    return [
        ROOT / name
        for name in listed
        if name
        and not name.startswith(LEFT_AS_WRITTEN)
        and name.endswith((".py", ".md", ".json", ".yaml", ".yml", ".toml", ".lua", ".ts", ".sh"))
        and (ROOT / name).is_file()
    ]


def test_no_issue_numbers_or_machine_paths() -> None:
    found = []
    for path in _tracked_text_files():
        if path == Path(__file__):
            continue
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        ):
            if ISSUE_NUMBER.search(line) or MACHINE_PATH.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)
