"""kill -9 of the MCP server mid-run, then a restart: the run resumes after `initialize`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.mcp.conftest import server_env, write_workflow
from tests.mcp.messages import INITIALIZE, INITIALIZED

pytestmark = pytest.mark.slow


class StdioSession:
    """A real server process, spoken to line by line (so the test can kill it at will)."""

    def __init__(self, project: Path, tmp_path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workrail_mcp", "--project", str(project), "--allow-commands"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=server_env(tmp_path),
            cwd=tmp_path,
            text=True,
        )
        self.next_id = 0
        self.request("initialize", INITIALIZE["params"])
        self.send(INITIALIZED)

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed its stdout"
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()

    def tool(self, name: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments})["result"][
            "structuredContent"
        ]


def test_kill_9_of_the_server_then_restart(tmp_path):
    project = tmp_path / "project"
    log = project / "log"
    # A step sleeps the seconds given only the first time it runs: long enough to be killed
    # mid-step under any load; its rerun after the restart need not wait them again.
    step = (
        "import os, sys, time; log, name = sys.argv[1:3]; "
        "again = os.path.exists(log) and name in open(log).read().split(); "
        "open(log, 'a').write(name + '\\n'); time.sleep(0 if again else float(sys.argv[3]))"
    )
    write_workflow(
        project / "workflows",
        {
            "id": "crash-flow",
            "name": "Crash",
            "description": "two steps",
            "version": "1.0.0",
            "steps": [
                {
                    "id": "one",
                    "title": "one",
                    "run": {"command": [sys.executable, "-c", step, str(log), "one", "0"]},
                },
                {
                    "id": "two",
                    "title": "two",
                    "run": {"command": [sys.executable, "-c", step, str(log), "two", "10"]},
                },
            ],
        },
    )
    first = StdioSession(project, tmp_path)
    run_id = first.tool("run_workflow", {"workflow_name": "crash-flow", "wait_seconds": 0})[
        "workflow_id"
    ]
    deadline = time.monotonic() + 60
    while "two" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    first.kill()
    second = StdioSession(project, tmp_path)
    try:
        result = second.tool("get_workflow_run", {"workflow_id": run_id, "wait_seconds": 60})
    finally:
        second.kill()
    assert result["status"] == "success", result
    assert log.read_text().split() == ["one", "two", "two"]  # step one not re-run, two resumed


def test_server_ends_at_eof_with_a_run_waiting_and_the_next_one_continues_it(tmp_path):
    project = tmp_path / "project"
    write_workflow(
        project / "workflows",
        {
            "id": "ask-flow",
            "name": "Ask",
            "description": "one question",
            "version": "1.0.0",
            "steps": [
                {
                    "id": "question",
                    "title": "Question",
                    "prompt": "Tell me",
                    "validationCriteria": {
                        "type": "contains",
                        "value": "yes",
                        "message": "Say yes",
                    },
                }
            ],
        },
    )
    first = StdioSession(project, tmp_path)
    run_id = first.tool("run_workflow", {"workflow_name": "ask-flow", "wait_seconds": 30})[
        "workflow_id"
    ]
    first.proc.stdin.close()
    first.proc.wait(timeout=15)  # does not hang on the waiting run's thread
    first.proc.stdout.close()
    second = StdioSession(project, tmp_path)
    try:
        state = second.tool("get_workflow_run", {"workflow_id": run_id, "wait_seconds": 30})
        assert state["status"] == "waiting"
        done = second.tool("continue_workflow", {"workflow_id": run_id, "output": "yes"})
    finally:
        second.kill()
    assert done["status"] == "success" and done["outcome"] == "accepted"


def test_a_server_that_ends_mid_step_hands_its_run_to_a_worker(tmp_path):
    """Issue 20: stdin closed while a command step runs — the server exits at once, and a worker
    it started takes the run over (nobody opens the store again)."""
    project = tmp_path / "project"
    log = project / "log"
    # 2 s the first time (the server ends mid-step), none when the worker runs it again
    step = (
        "import os, sys, time; again = os.path.exists(sys.argv[1]); "
        "open(sys.argv[1], 'a').write('start\\n'); time.sleep(0 if again else 2)"
    )
    write_workflow(
        project / "workflows",
        {
            "id": "long-flow",
            "name": "Long",
            "description": "one long step",
            "version": "1.0.0",
            "steps": [
                {
                    "id": "long",
                    "title": "long",
                    "run": {"command": [sys.executable, "-c", step, str(log)]},
                },
            ],
        },
    )
    server = StdioSession(project, tmp_path)
    run_id = server.tool("run_workflow", {"workflow_name": "long-flow", "wait_seconds": 0})[
        "workflow_id"
    ]
    deadline = time.monotonic() + 60
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    server.proc.stdin.close()
    server.proc.wait(timeout=15)
    server.proc.stdout.close()
    from workrail_engine.runs.history import RunHistory

    history = RunHistory(home=Path(server_env(tmp_path)["WORKRAIL_HOME"]) / "runs")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = history.run(run_id)
            if found and found["status"] == "success":
                break
            time.sleep(0.5)
        assert found and found["status"] == "success", found
    finally:
        history.close()
    assert log.read_text().split() == ["start", "start"]  # killed with the server, run again
