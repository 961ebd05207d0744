"""The README's commands work as written.

Its shell blocks marked ```` ```bash safe ```` run in order, by bash, in an empty project with a
temporary HOME and this environment's commands on PATH. The two commands at the top are not run
whole (the first serves until stopped, the second is this suite): each of their parts is checked
against `.ci/run`, which CI runs on a fresh machine, and the server is started as the first one
starts it (on a free port) to see that it serves the bundled workflows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.M | re.S)
BIN = Path(sys.executable).parent


def shell_blocks() -> list[tuple[str, str]]:
    """(the words after the language, the text) of each bash block, in order."""
    return [
        (info.strip(), text) for language, info, text in FENCE.findall(README) if language == "bash"
    ]


def ci_lines() -> list[str]:
    return [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]


def isolated_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKRAIL_")}
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", NO_COLOR="1")
    return env


def test_the_two_commands_on_top_are_the_ones_ci_runs():
    install_and_serve, install_and_test = (text.strip() for _, text in shell_blocks()[:2])
    assert install_and_serve == (
        "python3 -m venv .venv && .venv/bin/pip install uv && .venv/bin/uv pip install ."
        " && .venv/bin/workrail-mcp --transport http"
    )
    venv, uv, install, test = install_and_test.split(" && ")
    ci = ci_lines()
    assert venv in ci
    assert uv.replace("pip install", "pip install --quiet") in ci
    # CI installs the README's test extras and the lint extra its checks need (no test needs it)
    assert (
        install.replace("pip install", "pip install --quiet").replace("'.[test]'", "'.[test,lint]'")
        in ci
    )
    assert test in ci
    # nothing of the README's first screen comes before them but the one sentence
    assert README.index("```bash") < README.index("## ")


def test_the_first_command_serves_the_bundled_workflows(tmp_path):
    """`workrail-mcp --transport http` as the first command starts it (on a free port)."""
    with subprocess.Popen(
        [str(BIN / "workrail-mcp"), "--transport", "http", "--port", "0"],
        cwd=tmp_path,
        env=isolated_env(tmp_path),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    ) as server:
        assert server.stderr is not None
        banner = []
        while len(banner) < 20 and not (banner and banner[-1].startswith("Press Ctrl+C")):
            banner.append(server.stderr.readline())
        server.terminate()
    text = "".join(banner)
    assert re.search(r"listening on http://127\.0\.0\.1:\d+/mcp", text), text
    loaded = re.search(r"Loaded (\d+) workflows", text)
    assert loaded and int(loaded.group(1)) >= 8, text


def test_the_safe_blocks_run_as_written(tmp_path):
    safe = [text for info, text in shell_blocks() if info.split() == ["safe"]]
    assert any("workrail init" in text for text in safe)  # the quick start is among them
    assert any("workrail validate" in text for text in safe)
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    for text in safe:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", text],
            cwd=project,
            env=isolated_env(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{text}\n{done.stdout}\n{done.stderr}"
        # a comment that quotes the output says what the command prints
        for quoted in re.findall(r'# .*?"([^"]+)"', text):
            assert quoted in done.stdout + done.stderr, (quoted, done.stdout)


def test_the_readme_and_the_neovim_plugin_load_on_the_same_filetypes():
    plugin = (REPO / "editors" / "nvim" / "README.md").read_text(encoding="utf-8")
    lists = [re.findall(r"ft = \{([^}]*)\}", text) for text in (README, plugin)]
    assert lists[0] and lists[0][0] == lists[1][0], lists


def test_the_install_writes_the_bytecode_of_what_it_installs():
    """uv, which the two commands install with, leaves bytecode to the first import unless told;
    where a process may not write it every server start compiles the SDK anew (pyproject.toml)."""
    uv = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["uv"]
    assert uv["compile-bytecode"] is True
    assert all(".venv/bin/uv pip install" in text for _, text in shell_blocks()[:2])
