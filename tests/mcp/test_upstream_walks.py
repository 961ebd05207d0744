"""Upstream WorkRail v3.121.0's 42 workflows, both walks of tests/mcp/upstream_walks.py, through
``workrail-mcp --tools upstream`` over stdio: every ending is upstream's as recorded
(tests/fixtures/upstream_sessions/walk_endings.json, by bench/upstream_walks.py --record) or one
of the differences docs/compatibility.md explains (``DOCUMENTED``).

Upstream's workflow files are read from the local mirror of its repository at the tag (not kept
in this repository); without the mirror the test skips, naming ``WORKRAIL_UPSTREAM_MIRROR``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest
from mcp import Client

from tests.mcp.conftest import server_env, stdio_parameters
from tests.mcp.upstream_walks import DOCUMENTED, SdkCaller, walk_all, workflow_files

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "upstream_sessions"
# a clone (or bare mirror) of upstream's repository, named by whoever runs the suite
MIRROR = os.environ.get("WORKRAIL_UPSTREAM_MIRROR", "")
TAG = "v3.121.0"


def upstream_workflows(into: Path) -> Path:
    """Upstream's ``workflows/`` folder at the tag, extracted from the mirror into ``into``."""
    if not MIRROR or not Path(MIRROR).is_dir():
        pytest.skip("set WORKRAIL_UPSTREAM_MIRROR to a clone of upstream's repository")
    archive = subprocess.run(
        ["git", "-C", MIRROR, "archive", "--format=tar", TAG, "workflows"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "workflows"


async def test_every_walk_of_upstreams_workflows_ends_as_upstreams_or_as_documented(tmp_path):
    folder = upstream_workflows(tmp_path / "upstream")
    recorded = json.loads((RECORDED / "walk_endings.json").read_text(encoding="utf-8"))
    assert len(workflow_files(folder)) == 42
    assert len(recorded) == 84
    project = tmp_path / "project"
    (project / "workflows").mkdir(parents=True)
    params = stdio_parameters(project, tmp_path, "--tools", "upstream", "--workflows", str(folder))
    params.env = server_env(tmp_path)
    async with Client(params) as client:
        ours = await walk_all(SdkCaller(client), folder, str(tmp_path))
    assert set(ours) == set(recorded)
    differing = {key for key in recorded if ours[key] != recorded[key]}
    unexplained = {key: (recorded[key], ours[key]) for key in differing - set(DOCUMENTED)}
    assert not unexplained
    # A documented difference that no longer differs leaves the list (and the docs).
    assert differing == set(DOCUMENTED)
