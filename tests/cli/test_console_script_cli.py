"""The installed `workrail` console script as a real process: exit codes, colour on a terminal,
and `workrail mcp` / `workrail lsp` handing their arguments to the servers."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

WORKRAIL = Path(sys.executable).with_name("workrail")
BAD = '{\n  "id": "bad",\n  "name": 5,\n  "steps": [{"id": "one", "title": "One", "prompt": "p"}]\n}\n'


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(WORKRAIL), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_console_script_validates_and_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(BAD)
    result = run("validate", str(bad))
    assert result.returncode == 1, result
    assert result.stdout.startswith(f"{bad}:3:11: WR101 "), result.stdout
    assert result.stdout.endswith("Found 1 error in 1 file (1 file checked)\n")
    assert result.stderr == ""


def test_console_script_usage_error_exits_2(tmp_path: Path) -> None:
    result = run("validate", str(tmp_path / "nope.json"))
    assert result.returncode == 2, result
    assert "no such file or directory" in result.stderr and "Traceback" not in result.stderr


def run_on_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run with stdout on a pseudo-terminal (so it *is* a terminal) and return what it wrote."""
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [str(WORKRAIL), *args], stdout=follower, stderr=subprocess.DEVNULL, env=env
    ) as process:
        os.close(follower)
        chunks = []
        while True:
            ready, _, _ = select.select([leader], [], [], 30)
            if not ready:
                break
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal closes when the process exits
                break
            if not data:
                break
            chunks.append(data)
        process.wait(timeout=30)
    os.close(leader)
    return b"".join(chunks).decode()


@pytest.mark.parametrize(
    ("no_color", "coloured"), [(None, True), ("1", False)], ids=["terminal", "NO_COLOR"]
)
def test_colour_on_a_terminal_unless_no_color(
    tmp_path: Path, no_color: str | None, coloured: bool
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(BAD)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env["TERM"] = "xterm"
    if no_color is not None:
        env["NO_COLOR"] = no_color
    output = run_on_terminal(["validate", str(bad)], env)
    assert "WR101" in output, output
    assert ("\x1b[" in output) is coloured, repr(output)


@pytest.mark.parametrize(("command", "server"), [("mcp", "workrail-mcp"), ("lsp", "workrail-lsp")])
def test_server_commands_forward_every_argument(command: str, server: str) -> None:
    ours = run(command, "--help")
    theirs = subprocess.run(
        [str(WORKRAIL.with_name(server)), "--help"], capture_output=True, text=True, timeout=60
    )
    assert ours.returncode == theirs.returncode == 0, (ours, theirs)
    assert ours.stdout == theirs.stdout and ours.stdout.startswith(f"Usage: {server} [OPTIONS]")


@pytest.mark.parametrize("command", ["validate", "run", "mcp", "lsp", "dashboard"])
def test_every_command_speaks_one_help_and_usage_style(command: str) -> None:
    shown = run(command, "--help")
    assert shown.returncode == 0, shown
    assert shown.stdout.startswith("Usage: "), shown.stdout
    assert "\nOptions:\n" in shown.stdout and "-h, --help" in shown.stdout, shown.stdout
    wrong = run(command, "--no-such-option")
    assert wrong.returncode == 2, wrong
    assert wrong.stderr.startswith("Usage: ") and "Try '" in wrong.stderr, wrong.stderr
    assert "Error: No such option '--no-such-option'" in wrong.stderr, wrong.stderr


def test_help_lists_every_command_with_a_whole_summary() -> None:
    from click.testing import CliRunner

    from workrail_engine.cli import cli

    # click cuts a summary that does not fit beside the longest command name on an 80-column terminal
    out = CliRunner().invoke(cli, ["--help"], terminal_width=80).stdout
    commands = out.split("Commands:\n", 1)[1]
    assert sorted(line.split()[0] for line in commands.splitlines()) == sorted(cli.commands), out
    assert "..." not in commands, out
