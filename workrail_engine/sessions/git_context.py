"""The git branch and HEAD commit of a workspace, read from ``.git`` itself (no process started).

Sessions record them when they start, and `resume` ranks sessions of the same commit or branch
first. A worktree's ``.git`` file (``gitdir: …``) is followed; packed refs are read; anything
unreadable is simply unknown (None).
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["git_context"]

_SHA = re.compile(r"^[0-9a-f]{40}$")


def _git_dir(workspace: Path) -> Path | None:
    for directory in (workspace, *workspace.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                return target if target.is_absolute() else directory / target
    return None


def _common_dir(git_dir: Path) -> Path:
    common = git_dir / "commondir"
    if common.is_file():
        return (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
    return git_dir


def _ref_sha(git_dir: Path, ref: str) -> str | None:
    for base in (git_dir, _common_dir(git_dir)):
        loose = base / ref
        if loose.is_file():
            sha = loose.read_text(encoding="utf-8").strip()
            return sha if _SHA.match(sha) else None
    packed = _common_dir(git_dir) / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _SHA.match(sha):
                return sha
    return None


def git_context(workspace: str | Path | None) -> tuple[str | None, str | None]:
    """(branch, HEAD sha) of the repository holding ``workspace``; None for what is unknown
    (no repository, a detached HEAD has no branch)."""
    if not workspace:
        return None, None
    try:
        git_dir = _git_dir(Path(workspace))
        if git_dir is None:
            return None, None
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if head.startswith("ref:"):
            ref = head.removeprefix("ref:").strip()
            return ref.removeprefix("refs/heads/"), _ref_sha(git_dir, ref)
        return None, head if _SHA.match(head) else None
    except OSError:
        return None, None
