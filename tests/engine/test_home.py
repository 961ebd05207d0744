"""One default home for the user's workflows and the run store."""

from __future__ import annotations

from pathlib import Path

import pytest

from workrail_engine.catalog import user_directory
from workrail_engine.runs.resolve import store_home


def test_workflows_and_runs_share_one_default_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("WORKRAIL_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_directory() == tmp_path / ".workrail" / "workflows"
    assert store_home(create=False) == tmp_path / ".workrail" / "runs"


def test_workrail_home_moves_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path / "elsewhere"))
    assert user_directory().parent == store_home(create=False).parent == tmp_path / "elsewhere"
