"""The branch and HEAD of a workspace read from `.git`: worktrees, packed refs, and files that are
not small regular ones (unknown, at once)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from workrail_engine.sessions.git_context import MAX_PACKED_REFS_BYTES, git_context

# the module, not the function the package names after it
module = importlib.import_module("workrail_engine.sessions.git_context")
SHA = "0123456789abcdef0123456789abcdef01234567"


def repository(root: Path, head: str = "ref: refs/heads/main\n") -> Path:
    git = root / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head)
    return git


def test_a_branch_and_its_loose_ref(tmp_path):
    git = repository(tmp_path)
    (git / "refs" / "heads" / "main").write_text(SHA + "\n")
    assert git_context(tmp_path / "sub" / "dir") == ("main", SHA)


def test_a_detached_head(tmp_path):
    repository(tmp_path, SHA + "\n")
    assert git_context(tmp_path) == (None, SHA)


def test_a_worktree_and_packed_refs(tmp_path):
    main = repository(tmp_path / "main")
    (main / "packed-refs").write_text(f"# pack-refs\n{SHA} refs/heads/topic\n")
    linked = main / "worktrees" / "topic"
    linked.mkdir(parents=True)
    (linked / "HEAD").write_text("ref: refs/heads/topic\n")
    (linked / "commondir").write_text("../..\n")
    (tmp_path / "topic").mkdir()
    (tmp_path / "topic" / ".git").write_text(f"gitdir: {linked}\n")
    assert git_context(tmp_path / "topic") == ("topic", SHA)


def test_packed_refs_that_are_not_a_bounded_regular_file_leave_the_commit_unknown(tmp_path):
    git = repository(tmp_path)
    os.mkfifo(git / "packed-refs")
    assert git_context(tmp_path) == ("main", None)
    (git / "packed-refs").unlink()
    with open(git / "packed-refs", "w") as packed:
        packed.write(f"{SHA} refs/heads/main\n")
        packed.truncate(MAX_PACKED_REFS_BYTES + 1)
    assert git_context(tmp_path) == ("main", None)


def test_a_worktree_file_pointing_at_a_device_is_unknown(tmp_path):
    (tmp_path / ".git").symlink_to("/dev/zero")
    assert git_context(tmp_path) == (None, None)
    (tmp_path / ".git").unlink()
    (tmp_path / ".git").write_text("gitdir: /dev\n")  # /dev/HEAD is not there
    assert git_context(tmp_path) == (None, None)


def test_past_the_time_budget_everything_is_unknown(tmp_path, monkeypatch: pytest.MonkeyPatch):
    git = repository(tmp_path)
    (git / "refs" / "heads" / "main").write_text(SHA + "\n")
    monkeypatch.setattr(module, "GIT_CONTEXT_SECONDS", -1.0)
    assert git_context(tmp_path) == (None, None)
