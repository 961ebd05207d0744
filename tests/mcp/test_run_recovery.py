"""kill -9 of the MCP server mid-run, then a restart: the run resumes after `initialize`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.mcp.conftest import server_env, write_workflow
from tests.mcp.messages import INITIALIZE, INITIALIZED
from tests.mcp.test_run_tools import TWO_QUESTIONS
from workrail_engine.runs.answer_delivery import CRASH_AFTER_RECORDING

pytestmark = pytest.mark.slow


class StdioSession:
    """A real server process, spoken to line by line (so the test can kill it at will), started
    with ``options`` for a client declaring ``capabilities``."""

    def __init__(
        self,
        project: Path,
        tmp_path: Path,
        options: tuple[str, ...] = ("--allow-commands",),
        capabilities: dict | None = None,
        **env: str,
    ) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workrail_mcp", "--project", str(project), *options],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=server_env(tmp_path, **env),
            cwd=tmp_path,
            text=True,
        )
        self.next_id = 0
        self.request("initialize", {**INITIALIZE["params"], "capabilities": capabilities or {}})
        self.send(INITIALIZED)

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.start(method, params)
        answer_id = self.next_id
        return self.receive(lambda message: "method" not in message and message["id"] == answer_id)

    def start(self, method: str, params: dict) -> int:
        """Send a request without waiting for its answer; its id."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def receive(self, wanted: Callable[[dict], bool], seconds: float = 60) -> dict:
        """The first message ``wanted`` (the others are skipped); the process is killed when
        none comes within ``seconds``."""
        watchdog = threading.Timer(seconds, self.proc.kill)
        watchdog.start()
        try:
            while True:
                line = self.proc.stdout.readline()
                assert line, f"the server closed its stdout (or sent nothing in {seconds} s)"
                message = json.loads(line)
                if wanted(message):
                    return message
        finally:
            watchdog.cancel()

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
    """Stdin closed while a command step runs — the server exits at once, and a worker
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


def _dies_recording_the_answer(project: Path, tmp_path: Path, run_id: str) -> None:
    """A server that records the answer to the run's first step and ends right then, before
    sending it to the run (the fault point of `answer_delivery`)."""
    dying = StdioSession(project, tmp_path, **{CRASH_AFTER_RECORDING: "1"})
    arguments = {"workflow_id": run_id, "output": "the answer", "wait_seconds": 0}
    dying.send(
        {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "tools/call",
            "params": {"name": "continue_workflow", "arguments": arguments},
        }
    )
    assert dying.proc.stdout.read() == ""  # no answer: it ended first
    assert dying.proc.wait(timeout=30) != 0
    dying.proc.stdin.close()
    dying.proc.stdout.close()


def _moved_on(server: StdioSession, run_id: str) -> dict:
    state = server.tool("get_workflow_run", {"workflow_id": run_id, "wait_seconds": 20})
    assert state["status"] == "waiting" and state["waiting"]["step_key"] == "second", state
    assert state["step_results"][0]["output"] == "the answer"
    return state


def test_an_answer_recorded_by_a_server_that_died_reaches_the_run_after_a_restart(tmp_path):
    """The answer was recorded, never sent: the run stayed `running` for good (a retry was a
    replay, another answer refused). A new server sends it again."""
    project = tmp_path / "project"
    write_workflow(project / "workflows", TWO_QUESTIONS)
    first = StdioSession(project, tmp_path)
    run_id = first.tool("run_workflow", {"workflow_name": "two-questions", "wait_seconds": 30})[
        "workflow_id"
    ]
    first.kill()  # the run waits with no process; the next one to open the store takes it
    _dies_recording_the_answer(project, tmp_path, run_id)
    restarted = StdioSession(project, tmp_path)
    try:
        _moved_on(restarted, run_id)
        replay = restarted.tool("continue_workflow", {"workflow_id": run_id, "output": "x"})
        assert replay["outcome"] == "accepted" and replay["answered_step"] == "second"
    finally:
        restarted.kill()


def test_a_retry_of_an_answer_recorded_but_never_sent_delivers_it(tmp_path):
    """The run waits in a live server; another process recorded the answer and ended before
    sending it. The agent's retry of the same answer sends it again, and the run moves on."""
    project = tmp_path / "project"
    write_workflow(project / "workflows", TWO_QUESTIONS)
    executing = StdioSession(project, tmp_path)
    try:
        run_id = executing.tool(
            "run_workflow", {"workflow_name": "two-questions", "wait_seconds": 30}
        )["workflow_id"]
        _dies_recording_the_answer(project, tmp_path, run_id)
        retry = executing.tool(
            "continue_workflow",
            {"workflow_id": run_id, "output": "the answer", "wait_seconds": 20},
        )
        assert retry["outcome"] == "replayed", retry
        _moved_on(executing, run_id)
    finally:
        executing.kill()
