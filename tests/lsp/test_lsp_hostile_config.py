"""A project configuration file that is no regular file (a symlink to /dev/zero, which Git can
store; a FIFO) or too large: the real language server logs it once, carries on with the default
configuration, and answers, within a 1 GiB address space (a server that read without end would
fail here with MemoryError instead of taking the machine's memory)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from raw_lsp import RawLspServer

pytestmark = pytest.mark.slow

MEMORY_LIMIT = 1024**3
ANSWER_SECONDS = 15
# Its id differs from its file name: a WR601 warning, which the default configuration reports.
MISNAMED = json.dumps(
    {"id": "other-name", "name": "N", "steps": [{"id": "a", "title": "A", "prompt": "p"}]}
)


def project(root: Path, name: str) -> tuple[Path, Path]:
    """A project folder with a workflow; its configuration file's path (not made yet)."""
    folder = root / name
    (folder / ".workrail").mkdir(parents=True)
    (folder / "workflows").mkdir()
    return folder / "workflows" / "flow.json", folder / ".workrail" / "config.toml"


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    flows = {}
    flow, config = project(root, "zero")
    config.symlink_to("/dev/zero")
    flows[flow] = config
    flow, config = project(root, "fifo")
    os.mkfifo(config)
    flows[flow] = config
    flow, config = project(root, "large")
    config.write_text("# " + "x" * (2 * 1024 * 1024) + "\n")
    flows[flow] = config
    for flow in flows:
        flow.write_text(MISNAMED)
    return root, flows


def test_a_broken_configuration_file_is_logged_once_and_the_defaults_apply(workspace):
    root, flows = workspace
    server = RawLspServer(root, memory_limit=MEMORY_LIMIT)
    try:
        server.initialize({"textDocument": {"diagnostic": {}}})
        uris = {server.open(flow, MISNAMED): config for flow, config in flows.items()}

        def pull_all() -> None:
            for uri in uris:
                report = server.call(
                    "textDocument/diagnostic",
                    {"textDocument": {"uri": uri}},
                    timeout=ANSWER_SECONDS,
                )
                codes = [item["code"] for item in report["result"]["items"]]
                assert "WR601" in codes, (uri, report)  # the defaults: every code reported

        pull_all()
        logged = server.stderr_text()
        for config in uris.values():
            assert f"ignoring the project configuration: {config}" in logged, logged
        for _ in range(3):
            pull_all()
        # The failure is kept until the file changes: not read, nor logged, at each request.
        assert server.stderr_text().count("ignoring the project configuration") == logged.count(
            "ignoring the project configuration"
        )
    finally:
        assert server.close() == 0, server.stderr_text()[-3000:]
