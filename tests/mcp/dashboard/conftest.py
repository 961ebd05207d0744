"""The dashboard as users run it: a real `workrail dashboard` (or `workrail-mcp --transport http`)
process on a temporary run store, runs started by the real CLI, pages in Debian's Chromium."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from system_packages import chromium, opt_in

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PY = sys.executable
BROWSER_SWITCH = "WORKRAIL_TESTS_BROWSER"

# Prints HTML (it must stay text), a skipped step, a parallel group with a retried member.
DEMO = {
    "id": "dash-demo",
    "name": "Dashboard demo",
    "description": "Every kind of step the dashboard draws",
    "version": "1.2.0",
    "category": "testing",
    "tags": ["demo", "dashboard"],
    "parameters": {
        "type": "object",
        "properties": {
            "who": {"type": "string", "default": "world", "description": "Whom to greet"},
            "loud": {"type": "boolean", "default": False},
            "times": {"type": "integer", "default": 2},
            "flavour": {"enum": ["plain", "fancy"], "default": "plain"},
        },
    },
    "steps": [
        {
            "id": "greet",
            "title": "Greet",
            "run": {
                "command": [
                    PY,
                    "-c",
                    "print('<script>window.pwned=1</script><b id=\"injected\">hi</b> ' + __import__('sys').argv[1])",
                    "{{parameters.who}}",
                ]
            },
        },
        {
            "id": "shout",
            "title": "Shout",
            "runCondition": {"var": "parameters.loud", "equals": True},
            "run": {"command": ["echo", "LOUD"]},
        },
        {
            "id": "checks",
            "title": "Checks",
            "type": "parallel",
            "steps": [
                {"id": "check-one", "title": "Check one", "run": {"command": ["sleep", "0.3"]}},
                {
                    "id": "check-two",
                    "title": "Check two",
                    "run": {
                        "command": [
                            PY,
                            "-c",
                            "import sys; sys.stderr.write('flaky\\n'); sys.exit(1)",
                        ]
                    },
                    "retry": {"maxAttempts": 2, "delaySeconds": 0.1},
                    "onFailure": "continue",
                },
            ],
        },
        {
            "id": "repeat",
            "title": "Repeat",
            "type": "loop",
            "loop": {"type": "for", "count": 2, "maxIterations": 5},
            "body": [{"id": "tick", "title": "Tick", "run": {"command": ["echo", "tick"]}}],
        },
        {
            "id": "review",
            "title": "Review the greeting",
            "prompt": "Check that the greeting is polite.",
            "guidance": ["Be brief"],
            "runCondition": {"var": "parameters.flavour", "equals": "fancy"},
            "validationCriteria": [
                {"type": "contains", "value": "polite", "message": "Say whether it is polite"}
            ],
        },
    ],
}

# Three steps a second apart: long enough to watch the page follow it.
SLOW = {
    "id": "slow-steps",
    "name": "Slow steps",
    "description": "Three steps, a second apart",
    "version": "1.0.0",
    "steps": [
        {"id": f"step-{n}", "title": f"Step {n}", "run": {"command": ["sleep", "1"]}}
        for n in (1, 2, 3)
    ],
}

# One step that writes its pid, then sleeps: for cancelling.
SLEEPER = {
    "id": "sleeper",
    "name": "Sleeper",
    "description": "Sleeps for a minute unless cancelled",
    "version": "1.0.0",
    "parameters": {
        "type": "object",
        "properties": {"pidfile": {"type": "string"}},
        "required": ["pidfile"],
    },
    "steps": [
        {
            "id": "nap",
            "title": "Nap",
            "run": {
                "command": [
                    PY,
                    "-c",
                    "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)",
                    "{{parameters.pidfile}}",
                ]
            },
        }
    ],
}

# Stops at a prompt step: the run waits for the agent.
ASKS = {
    "id": "asks-agent",
    "name": "Asks the agent",
    "description": "One command, then a question for the agent",
    "version": "1.0.0",
    "steps": [
        {"id": "prepare", "title": "Prepare", "run": {"command": ["echo", "ready"]}},
        {
            "id": "decide",
            "title": "Decide",
            "prompt": "Pick the option that keeps the tests green.",
            "guidance": ["Explain the choice in one line"],
        },
    ],
}

# An upstream 3.x prompt written as promptBlocks: served (and planned) only once compiled.
BLOCKS = {
    "id": "blocks-flow",
    "name": "Prompt blocks",
    "description": "One agent step written as promptBlocks",
    "version": "1.0.0",
    "steps": [
        {
            "id": "plan",
            "title": "Plan",
            "promptBlocks": {"goal": "Plan the change.", "procedure": ["Read", "Write"]},
        }
    ],
}

# Three command steps, each appending its id to the file ``log``: a fork's kept steps must not
# append again.
APPENDS = {
    "id": "appends",
    "name": "Appends",
    "description": "Each step appends its id to a file",
    "version": "1.0.0",
    "parameters": {
        "type": "object",
        "properties": {"log": {"type": "string"}},
        "required": ["log"],
    },
    "steps": [
        {
            "id": name,
            "title": name.capitalize(),
            "run": {
                "command": [
                    PY,
                    "-c",
                    "import sys; open(sys.argv[1], 'a').write(sys.argv[2] + '\\n')",
                    "{{parameters.log}}",
                    name,
                ]
            },
        }
        for name in ("first", "second", "third")
    ],
}

BROKEN = '{\n  "id": "broken-flow",\n  "name": "Broken",\n  "steps": [\n    {"id": "x"}\n  ]\n}\n'


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dash-project")
    flows = root / "workflows"
    flows.mkdir()
    for flow in (DEMO, SLOW, SLEEPER, ASKS, BLOCKS, APPENDS):
        (flows / f"{flow['id']}.json").write_text(json.dumps(flow, indent=2))
    (flows / "broken-flow.json").write_text(BROKEN)
    return root


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("WORKRAIL_WORKFLOW_PATH", "WORKRAIL_HTTP_TOKEN", "WORKRAIL_DATABASE_URL")
    }
    env["WORKRAIL_HOME"] = str(home)
    env.update(extra)
    return env


@contextmanager
def served(command: list[str], cwd: Path, env: dict[str, str], pattern: str) -> Iterator[str]:
    """Start a server process; yield the URL its banner prints (matching ``pattern``)."""
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        url = None
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            assert line, f"server exited ({process.poll()}): {lines}"
            lines.append(line.rstrip("\n"))
            found = re.search(pattern, line)
            if found:
                url = found.group(1)
            if line.startswith("Press Ctrl+C"):
                break
        assert url, lines
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def workrail(*args: str) -> list[str]:
    return [PY, "-c", "from workrail_engine.cli import main; main()", *args]


def cli(project: Path, home: Path, *args: str, timeout: float = 120) -> str:
    """`workrail ARGS` in ``project`` on the store in ``home``, to its end: its standard output
    (it must exit 0)."""
    done = subprocess.run(
        workrail(*args),
        cwd=project,
        env=env_for(home),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def cli_run(project: Path, home: Path, workflow: str, *params: str, timeout: float = 120) -> str:
    """`workrail run --format json` to its end; the run id."""
    argv = workrail("run", workflow, "--format", "json")
    for param in params:
        argv += ["--param", param]
    done = subprocess.run(
        argv, cwd=project, env=env_for(home), capture_output=True, text=True, timeout=timeout
    )
    payload = json.loads(done.stdout[done.stdout.index("{") :])
    return payload["workflow_id"]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("dash-home")


@pytest.fixture(scope="module")
def dashboard_url(project, home) -> Iterator[str]:
    """`workrail dashboard --port 0` on the module's store."""
    with served(
        workrail("dashboard", "--port", "0"),
        project,
        env_for(home),
        r"listening on (http://\S+/)",
    ) as url:
        yield url


@pytest.fixture(scope="module")
def allowed_dashboard_url(project, home) -> Iterator[str]:
    """`workrail dashboard --port 0 --allow-commands`: one that may start (and fork) runs."""
    with served(
        workrail("dashboard", "--port", "0", "--allow-commands"),
        project,
        env_for(home),
        r"listening on (http://\S+/)",
    ) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    opt_in(BROWSER_SWITCH)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    """Where the tests leave a screenshot of each page (``WORKRAIL_SCREENSHOTS`` to keep them)."""
    chosen = os.environ.get("WORKRAIL_SCREENSHOTS")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return Path(chosen)
    return tmp_path_factory.mktemp("screenshots")
