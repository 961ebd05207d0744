"""The git branch and HEAD commit of a workspace, read from ``.git`` itself (no process started).

Sessions record them when they start, and `resume` ranks sessions of the same commit or branch
first. A worktree's ``.git`` file (``gitdir: …``) is followed; packed refs are read; anything
unreadable is simply unknown (None).

The workspace is the caller's to choose, so what is under ``.git`` may be anything: every file is
read through `read_regular_file` (a FIFO or a device is not opened for reading, never past a
bound), and the whole look-up has a short time budget. Past any of them the answer is unknown.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from ..text.regular_files import UnreadableFile, read_regular_file

__all__ = ["GIT_CONTEXT_SECONDS", "MAX_GIT_FILE_BYTES", "MAX_PACKED_REFS_BYTES", "git_context"]

MAX_GIT_FILE_BYTES = 4 << 10  # HEAD, a worktree's .git file, commondir, a loose ref: one line
MAX_PACKED_REFS_BYTES = 4 << 20  # packed-refs: a line per ref (~60 bytes), 70,000 refs
GIT_CONTEXT_SECONDS = 1.0  # the whole look-up; a slower file system gives "unknown"

_SHA = re.compile(r"^[0-9a-f]{40}$")


class _Unknown(Exception):
    """What ``.git`` holds cannot be told within the bounds."""


class _Reader:
    def __init__(self) -> None:
        self._deadline = time.monotonic() + GIT_CONTEXT_SECONDS

    def text(self, path: Path, max_bytes: int = MAX_GIT_FILE_BYTES) -> str:
        if time.monotonic() > self._deadline:
            raise _Unknown(path)
        try:
            return read_regular_file(path, max_bytes).decode("utf-8", errors="replace")
        except UnreadableFile:
            raise _Unknown(path) from None


def _git_dir(workspace: Path, read: _Reader) -> Path | None:
    for directory in (workspace, *workspace.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = read.text(dot_git).strip()
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                return target if target.is_absolute() else directory / target
    return None


def _common_dir(git_dir: Path, read: _Reader) -> Path:
    common = git_dir / "commondir"
    if common.is_file():
        return (git_dir / read.text(common).strip()).resolve()
    return git_dir


def _ref_sha(git_dir: Path, ref: str, read: _Reader) -> str | None:
    for base in (git_dir, _common_dir(git_dir, read)):
        loose = base / ref
        if loose.is_file():
            sha = read.text(loose).strip()
            return sha if _SHA.match(sha) else None
    packed = _common_dir(git_dir, read) / "packed-refs"
    if packed.is_file():
        for line in read.text(packed, MAX_PACKED_REFS_BYTES).splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _SHA.match(sha):
                return sha
    return None


def git_context(workspace: str | Path | None) -> tuple[str | None, str | None]:
    """(branch, HEAD sha) of the repository holding ``workspace``; None for what is unknown
    (no repository, a detached HEAD has no branch, a file that is not a small regular one)."""
    if not workspace:
        return None, None
    read = _Reader()
    try:
        git_dir = _git_dir(Path(workspace), read)
        if git_dir is None:
            return None, None
        head = read.text(git_dir / "HEAD").strip()
        if head.startswith("ref:"):
            ref = head.removeprefix("ref:").strip()
            try:
                sha = _ref_sha(git_dir, ref, read)
            except _Unknown:
                sha = None
            return ref.removeprefix("refs/heads/"), sha
        return None, head if _SHA.match(head) else None
    except (OSError, ValueError, _Unknown):
        return None, None
