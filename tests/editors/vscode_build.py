"""Building the VS Code extension from editors/vscode, for the editor tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
NPM_CACHE = Path("/tmp/workrail-npm-cache")


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, (
        f"{' '.join(command)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done
