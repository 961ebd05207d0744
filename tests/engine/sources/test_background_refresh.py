"""What the servers' background refresh fetches (followed branches only: not a commit, not a
tag, nothing of a project with a lock), its interval, and its warning for an unreachable remote,
logged once. Real repositories over file://; the refresh run in the test's thread."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.git_remotes import GitRemote, project_using, workflow
from workrail_engine.sources.declared import RepoSource
from workrail_engine.sources.lock import write_lock
from workrail_engine.sources.refresh import (
    DEFAULT_SYNC_INTERVAL_SECONDS,
    MIN_SYNC_INTERVAL_OVERRIDE_SECONDS,
    MIN_SYNC_INTERVAL_SECONDS,
    SYNC_INTERVAL_VARIABLE,
    BackgroundRefresh,
    followed_sources,
    sync_interval,
)
from workrail_engine.sources.served import declared_sources


@pytest.fixture
def remote(tmp_path: Path) -> GitRemote:
    remote = GitRemote(tmp_path / "remotes")
    remote.write("flows/team.json", workflow("team-review"))
    remote.commit("one", tag="v1")
    return remote


def test_a_followed_branch_is_refreshed_a_pin_or_a_lock_is_not(tmp_path, remote):
    branch = project_using(remote, tmp_path / "branch")
    assert [s.rev for s in followed_sources([branch])] == ["main"]
    commit = project_using(remote, tmp_path / "commit", rev=remote.commit("two"))
    assert followed_sources([commit]) == []
    tag = project_using(remote, tmp_path / "tag", rev="v1")  # synced: known to be a tag
    assert followed_sources([tag]) == []
    (source,) = declared_sources(branch).sources
    write_lock(branch, [(source, "0" * 40)])
    assert followed_sources([branch]) == []


def test_the_interval_has_a_floor_and_a_default(monkeypatch):
    monkeypatch.delenv(SYNC_INTERVAL_VARIABLE, raising=False)
    source = RepoSource("file:///team.git", "main", "", "team", "here")
    assert sync_interval(source) == DEFAULT_SYNC_INTERVAL_SECONDS
    quick = RepoSource("file:///team.git", "main", "", "team", "here", sync_interval=0.6)
    assert sync_interval(quick) == MIN_SYNC_INTERVAL_SECONDS
    assert sync_interval(quick, {SYNC_INTERVAL_VARIABLE: "0.01"}) == (
        MIN_SYNC_INTERVAL_OVERRIDE_SECONDS
    )
    assert sync_interval(quick, {SYNC_INTERVAL_VARIABLE: "5"}) == 5.0


def test_an_unreachable_remote_keeps_the_cached_commit_and_warns_once(
    tmp_path, remote, caplog, monkeypatch
):
    monkeypatch.setenv(SYNC_INTERVAL_VARIABLE, "1")
    project = project_using(remote, tmp_path / "project")
    remote.bare.rename(tmp_path / "gone.git")
    moved: list[bool] = []
    refresh = BackgroundRefresh(lambda: [project], lambda: moved.append(True))
    with caplog.at_level(logging.WARNING, logger="workrail_engine.sources.refresh"):
        assert refresh.refresh_due() == pytest.approx(1.0, abs=0.5)
        refresh._next.clear()  # due again at once
        refresh.refresh_due()
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "serving the cached commit" in warnings[0], warnings
    assert moved == []
