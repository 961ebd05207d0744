"""`workrail-mcp` as a person meets it: --version, a busy port, files created under a umask."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import TEST_FLOW, by_id, server_command, server_env
from tests.mcp.messages import INITIALIZE, INITIALIZED

pytestmark = pytest.mark.slow


def test_version_is_printed(project, tmp_path):
    from workrail_engine import __version__

    done = subprocess.run(
        server_command(project, "--version"),
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"workrail-mcp {__version__}\n", "")


def test_help_and_usage_errors_answer_without_loading_the_sdk(tmp_path):
    """`workrail-mcp --help` and a usage error are read before the MCP SDK is imported (most of a
    second of import, 2.4 s wall at load 2 before): the package's names load on first use."""
    code = (
        "import sys\n"
        "from workrail_mcp.__main__ import main\n"
        "for argv in (['--help'], ['--bogus']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit as done:\n"
        "        print('exit', done.code, file=sys.stderr)\n"
        "print(sorted(m for m in ('mcp', 'workrail_mcp.server') if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )
    assert "Usage: workrail-mcp [OPTIONS]" in done.stdout
    lines = done.stderr.splitlines()
    assert (lines[0], lines[-2:]) == ("exit 0", ["exit 2", "[]"]), done.stderr
    assert "No such option '--bogus'" in done.stderr


@pytest.mark.parametrize(
    "option, directory",
    [
        pytest.param("--project", "${workspaceFolder}", id="unexpanded-variable"),
        pytest.param("--project", "no-such-project", id="project"),
        pytest.param("--workflows", "no-such-dir", id="workflows"),
    ],
)
def test_a_missing_directory_is_one_line_and_exit_2(project, tmp_path, option, directory):
    done = subprocess.run(
        [*server_command(project)[:3], option, directory],
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"workrail-mcp: error: {option}: directory {directory!r} does not exist"
    ), done.stderr


def test_a_busy_port_is_one_line_and_exit_1(project, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            server_command(project, "--transport", "http", "--port", str(port)),
            capture_output=True,
            text=True,
            timeout=60,
            env=server_env(tmp_path),
            cwd=tmp_path,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"workrail-mcp: error: 127.0.0.1:{port} is already in use; pass --port N (0 picks a free port)\n"
    )
    assert done.stdout == ""


def test_an_unknown_host_is_one_line_and_exit_1(project, tmp_path):
    done = subprocess.run(
        server_command(project, "--transport", "http", "--host", "no-such-host.invalid"),
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("workrail-mcp: error: cannot listen on 'no-such-host.invalid'")
    assert done.stderr.count("\n") == 1


def _create_over_stdio(project: Path, tmp_path: Path, umask: int) -> dict:
    flow = {**TEST_FLOW, "id": "made-here"}
    calls = [
        INITIALIZE,
        INITIALIZED,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "create_workflow",
                "arguments": {"name": "made-here", "definition": flow},
            },
        },
    ]
    payload = "".join(json.dumps(call) + "\n" for call in calls).encode()
    done = subprocess.run(
        server_command(project),
        input=payload,
        capture_output=True,
        timeout=60,
        env=server_env(tmp_path),
        cwd=tmp_path,
        umask=umask,
    )
    answer = by_id([json.loads(line) for line in done.stdout.decode().splitlines()])[2]["result"]
    assert not answer.get("isError"), answer
    return answer["structuredContent"]


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_created_files_follow_the_umask(project, tmp_path, umask, mode):
    created = _create_over_stdio(project, tmp_path, umask)
    assert stat.S_IMODE(Path(created["workflow_path"]).stat().st_mode) == mode
