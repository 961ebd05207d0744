"""``.workrail/sources.lock``: the commit each workflow repository of a project resolved to.

Written by ``workrail sources lock`` (and rewritten by ``workrail sources update``), committed with
the project; while it exists every reader (the CLI, the language server, the MCP server) serves
exactly those commits, whatever the branches have moved to. It holds URLs, revs and commit ids,
never a token (a URL with a password is refused before it gets here)::

    {"version": 1, "sources": [{"name": "team", "url": "https://…", "rev": "main",
                                "commit": "0123…"}]}
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from ..limits import MAX_CONFIG_BYTES
from ..text.regular_files import UnreadableFile, read_regular_file
from .cache import write_json_atomically
from .declared import COMMIT_ID, RepoSource

__all__ = ["LOCK_FILE", "LockError", "Locked", "read_lock", "write_lock"]

LOCK_FILE = os.path.join(".workrail", "sources.lock")
LOCK_VERSION = 1

Locked = dict[tuple[str, str | None], str]
"""(url, rev) → commit."""


class LockError(ValueError):
    """A lock file that cannot be read: named, with what to do."""


def lock_path(project_root: Path) -> Path:
    return project_root / LOCK_FILE


def read_lock(project_root: Path) -> Locked | None:
    """The locked commits; None when the project has no lock file."""
    path = lock_path(project_root)
    if not os.path.lexists(path):
        return None
    try:
        document = json.loads(read_regular_file(path, MAX_CONFIG_BYTES))
    except (UnreadableFile, ValueError) as error:
        raise LockError(
            f"{path}: cannot be read ({error}); run `workrail sources lock` to write it again"
        ) from None
    rows = document.get("sources") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        raise LockError(f"{path}: no 'sources' list; run `workrail sources lock` to write it again")
    locked: Locked = {}
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("url"), str):
            raise LockError(f"{path}: each source needs a 'url'; run `workrail sources lock`")
        commit = row.get("commit")
        if not isinstance(commit, str) or not COMMIT_ID.match(commit):
            raise LockError(
                f"{path}: {row['url']}: 'commit' must be a 40-digit commit id, not {commit!r}"
            )
        rev = row.get("rev")
        locked[(row["url"], rev if isinstance(rev, str) else None)] = commit
    return locked


def write_lock(project_root: Path, resolved: Iterable[tuple[RepoSource, str]]) -> Path:
    """Write the lock (whole, or not at all) with each source's commit; returns its path."""
    rows = [
        {"name": source.name, "url": source.url, "rev": source.rev, "commit": commit}
        for source, commit in resolved
    ]
    path = lock_path(project_root)
    write_json_atomically(path, {"version": LOCK_VERSION, "sources": rows})
    return path
