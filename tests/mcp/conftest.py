"""Shared fixtures: a project with known workflows, the server in memory and as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

from workrail_engine.catalog import Catalog, Source

if TYPE_CHECKING:
    from mcp import StdioServerParameters

    from tests.mcp.scripted_peer import SharedServers

TEST_FLOW = {
    "id": "test-flow",
    "name": "Test Flow",
    "description": "A small workflow for the MCP tests",
    "version": "1.0.0",
    "category": "testing",
    "steps": [
        {
            "id": "understand",
            "title": "Understand the task",
            "prompt": "Analyze the requirements; set taskScope to small or large.",
            "requireConfirmation": True,
            "validationCriteria": [
                {
                    "type": "contains",
                    "value": "requirements",
                    "message": "Mention the requirements",
                },
                {"type": "length", "min": 10, "message": "Say at least ten characters"},
            ],
        },
        {
            "id": "deep-dive",
            "title": "Deep dive",
            "prompt": "Study every module.",
            "runCondition": {"var": "taskScope", "equals": "large"},
        },
        {
            "id": "implement",
            "title": "Implement",
            "prompt": "Write the change.",
            "validationCriteria": {
                "type": "contains",
                "value": "tests",
                "condition": {"var": "taskScope", "equals": "large"},
                "message": "Large tasks need tests",
            },
        },
    ],
}

# The API spec's own workflow_get example (no version, no category: still valid).
SPEC_EXAMPLE = {
    "id": "ai-task-implementation",
    "name": "AI Task Prompt Workflow",
    "description": "Guides through task understanding → planning → implementation → verification",
    "preconditions": ["Task description is clear and complete"],
    "steps": [
        {
            "id": "understand",
            "title": "Deep understanding of task and codebase",
            "prompt": "Analyze the task description...",
            "requireConfirmation": True,
        }
    ],
}


def write_workflow(directory: Path, definition: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{definition['id']}.json"
    path.write_text(json.dumps(definition, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory whose ./workflows holds the test workflows."""
    root = tmp_path / "project"
    write_workflow(root / "workflows", TEST_FLOW)
    write_workflow(root / "workflows", SPEC_EXAMPLE)
    return root


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project of a module's kept servers (``shared_servers``); a module that needs more
    workflows overrides it, writing them before a server starts."""
    root = tmp_path_factory.mktemp("shared") / "project"
    write_workflow(root / "workflows", TEST_FLOW)
    write_workflow(root / "workflows", SPEC_EXAMPLE)
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_servers(
    shared_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SharedServers]:
    """Server processes kept for the module's tests (its tests run in the module's event loop:
    ``pytest.mark.asyncio(loop_scope="module")``)."""
    # imported here: scripted_peer imports this module's helpers
    from tests.mcp.scripted_peer import SharedServers

    async with SharedServers(shared_project, tmp_path_factory) as servers:
        yield servers


@pytest.fixture
def catalog(project: Path) -> Catalog:
    return Catalog([Source("project", project / "workflows")])


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Environment for a server process: no user or env workflows from this machine."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("WORKRAIL_WORKFLOW_PATH", "WORKRAIL_HTTP_TOKEN")
    }
    env["WORKRAIL_HOME"] = str(tmp_path / "home")
    env.update(extra)
    return env


def server_command(project: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "workrail_mcp", "--project", str(project), *extra]


def stdio_parameters(project: Path, tmp_path: Path, *extra: str) -> StdioServerParameters:
    """The real stdio server of ``project``, as the SDK's client launches it."""
    # imported here, not at the top: the SDK's import is ≈ 1 s of CPU, and a pytest process
    # running only tests of this folder that need none of it (test_system_packages.py starts
    # such processes) paid it for this conftest
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=server_command(project, *extra)[1:],
        env=server_env(tmp_path),
        cwd=str(tmp_path),
    )


def stdio_process(project: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    """A real stdio server process with pipes for stdin and stdout (stderr discarded)."""
    return subprocess.Popen(
        server_command(project),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )


def run_stdio(
    project: Path, tmp_path: Path, lines: list[str | bytes], timeout: float = 60
) -> tuple[list[dict], int, str]:
    """Feed raw lines to a real server process; its stdout lines (parsed), exit code, stderr."""
    payload = b"".join(
        (line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines
    )
    done = subprocess.run(
        server_command(project),
        input=payload,
        capture_output=True,
        timeout=timeout,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )
    raw_lines = done.stdout.decode("utf-8").splitlines()
    messages = []
    for raw in raw_lines:
        message = json.loads(raw)  # every stdout line must be exactly one JSON value
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", raw[:200]
        messages.append(message)
    return messages, done.returncode, done.stderr.decode("utf-8", "replace")


def by_id(messages: list[dict]) -> dict:
    answers: dict = {}
    for message in messages:
        if "id" in message and ("result" in message or "error" in message):
            assert message["id"] not in answers or message["id"] is None, (
                f"two answers for id {message['id']}"
            )
            answers.setdefault(message["id"], message)
    return answers
