"""Shared helpers of the CLI tests: an in-process runner whose failures show the output."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from workrail_engine.cli import cli


class Workflows:
    """Builds workflow files for a test (a fixture, since test modules here are not a package)."""

    @staticmethod
    def good(workflow_id: str = "good-flow") -> dict[str, Any]:
        return {
            "id": workflow_id,
            "name": "Good flow",
            "version": "1.0.0",
            "category": "development",
            "steps": [
                {"id": "understand", "title": "Understand", "prompt": "Read the task."},
                {"id": "plan", "title": "Plan", "prompt": "Plan from {{steps.understand.output}}."},
            ],
        }

    @staticmethod
    def write(directory: Path, name: str, content: dict[str, Any] | str) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / name
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def workflows() -> Workflows:
    return Workflows()


Invoke = Callable[..., Result]


@pytest.fixture
def invoke(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Invoke:
    """Run `workrail ARGS` in-process; ``expect`` checks the exit code with the output in the message."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    # Keep the user's own workflows and WORKRAIL_WORKFLOW_PATH out of the catalog.
    monkeypatch.setenv("WORKRAIL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("WORKRAIL_WORKFLOW_PATH", raising=False)

    def run(
        args: Sequence[str], *, expect: int | None = 0, env: dict[str, str] | None = None
    ) -> Result:
        result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        if expect is not None:
            assert result.exit_code == expect, (
                f"`workrail {' '.join(args)}` exited {result.exit_code}, expected {expect}\n"
                f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
            )
        return result

    return run
