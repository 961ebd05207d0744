"""Upstream WorkRail's format through the real MCP server process over stdio.

Our fixtures of every upstream construct (tests/fixtures/upstream) are listed, served by
`workflow_get` exactly as written, routines found in a subfolder, examples left out; an invalid
file is logged on stderr (at start and when it appears later) and asking for it by id answers
-32002 with its diagnostics.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.mcp.conftest import by_id, run_stdio, server_command, server_env
from tests.mcp.messages import INITIALIZE, INITIALIZED

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "upstream" / "workflows"
# Schema-invalid (a prompt step with neither prompt, promptBlocks nor templateCall).
BROKEN = {"id": "broken-one", "name": "Broken", "steps": [{"id": "only", "title": "Only"}]}


def call(request_id: int, method: str, **params) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


@pytest.fixture
def upstream_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES, root / "workflows")
    (root / "workflows" / "broken-one.json").write_text(json.dumps(BROKEN), encoding="utf-8")
    return root


def test_listed_served_as_written_and_invalid_files_explained(upstream_project, tmp_path):
    messages, code, stderr = run_stdio(
        upstream_project,
        tmp_path,
        [
            json.dumps(INITIALIZE),
            json.dumps(INITIALIZED),
            call(2, "workflow_list"),
            call(3, "workflow_get", id="team.release-review"),
            call(
                4, "tools/call", name="workflow_get", arguments={"id": "wr.routine-fixture-check"}
            ),
            call(5, "workflow_get", id="broken-one"),
            call(6, "workflow_next", workflowId="broken-one", completedSteps=[]),
            call(7, "workflow_get", id="example-not-served"),
            call(8, "workflow_next", workflowId="team.release-review", completedSteps=[]),
            call(99, "shutdown"),
        ],
    )
    assert code == 0
    answers = by_id(messages)
    listed = {w["id"] for w in answers[2]["result"]["workflows"] if w["source"] == "project"}
    assert listed == {"team.release-review", "wr.routine-fixture-check"}

    written = json.loads((upstream_project / "workflows" / "team.release-review.json").read_text())
    assert answers[3]["result"] == written  # every upstream field kept, nothing added or dropped
    routine = answers[4]["result"]
    routine_file = upstream_project / "workflows" / "routines" / "wr.routine-fixture-check.json"
    assert routine["structuredContent"] == json.loads(routine_file.read_text())
    assert json.loads(routine["content"][0]["text"]) == routine["structuredContent"]

    for request_id in (5, 6):
        error = answers[request_id]["error"]
        assert error["code"] == -32002, error
        assert error["data"]["workflowId"] == "broken-one"
        assert [d["code"] for d in error["data"]["diagnostics"]] == ["WR103"]
    assert answers[7]["error"]["code"] == -32001  # examples are not served
    assert answers[8]["result"]["step"]["id"] == "scope"

    [line] = [line for line in stderr.splitlines() if "broken-one.json" in line]
    assert "left out invalid workflow file" in line and "WR103" in line


def test_a_file_that_turns_invalid_later_is_logged_when_noticed(upstream_project, tmp_path):
    process = subprocess.Popen(
        server_command(upstream_project),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )

    def ask(request_id: int, method: str, **params) -> dict:
        process.stdin.write(call(request_id, method, **params).encode() + b"\n")
        process.stdin.flush()
        while True:
            message = json.loads(process.stdout.readline())
            if message.get("id") == request_id:
                return message

    with process:
        ask(1, "initialize", **INITIALIZE["params"])
        assert ask(2, "workflow_list")["result"]
        late = upstream_project / "workflows" / "routines" / "late-arrival.json"
        late.write_text(json.dumps({**BROKEN, "id": "late-arrival"}), encoding="utf-8")
        deadline = time.monotonic() + 30
        request_id = 3
        while (
            time.monotonic() < deadline
        ):  # the catalog re-scans at most every 2 s, in the background
            time.sleep(0.5)
            answer = ask(request_id, "workflow_get", id="late-arrival")
            request_id += 1
            if answer.get("error", {}).get("code") == -32002:
                break
        assert answer["error"]["code"] == -32002, answer
        ask(99, "shutdown")
        assert process.wait(timeout=30) == 0
        stderr = process.stderr.read().decode()
    [line] = [line for line in stderr.splitlines() if "late-arrival.json" in line]
    assert "WR103" in line
    assert sum("broken-one.json" in line for line in stderr.splitlines()) == 1  # not repeated
