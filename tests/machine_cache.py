"""What the tests make once per machine and reuse (code-server, the extension's node_modules, the
dependencies' wheels): made under a lock, in a staging folder renamed into place once complete,
so another pytest-xdist worker or another test run waits for it and never sees half of it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock


def made_once(target: Path, make: Callable[[Path], None]) -> Path:
    """`target`, made by ``make(staging)`` unless it exists."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{target}.lock"):
        if not target.exists():
            staging = target.with_name(target.name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            make(staging)
            staging.rename(target)
    return target
