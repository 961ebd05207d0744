"""The installed `workrail` console script as a real process: exit codes, colour on a terminal,
and `workrail mcp` / `workrail lsp` handing their arguments to the servers."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

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


def _workflow_comparing(workflow_id: str, operand: object) -> dict[str, object]:
    """A workflow whose second step runs when the context's ``count`` is greater than
    ``operand``, and which declares ``count`` an integer of at least ``operand``."""
    return {
        "id": workflow_id,
        "name": "Compare",
        "context": {"count": {"type": "integer", "minimum": operand}},
        "steps": [
            {"id": "one", "title": "One", "prompt": "Set count."},
            {
                "id": "two",
                "title": "Two",
                "prompt": "Go on.",
                "runCondition": {"var": "count", "gt": operand},
            },
        ],
    }


def _diagnostics(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {Path(f["path"]).name: f["diagnostics"] for f in report["files"]}


def test_a_step_copied_between_files_is_checked_for_each_files_content(tmp_path: Path) -> None:
    """One batch checks each distinct step once (by content) and reuses its findings for the
    same step in another file, and one process each distinct embedded schema: steps and schemas
    that differ only in an operand's type (1, true, "1": equal or alike to a careless key) get
    their own findings, placed at their own lines."""
    directory = tmp_path / "workflows"
    directory.mkdir()
    operands: list[tuple[str, object]] = [("a-flow", 1), ("b-flow", True), ("c-flow", "1")]
    for workflow_id, operand in operands:
        text = json.dumps(_workflow_comparing(workflow_id, operand))  # one line
        (directory / f"{workflow_id}.json").write_text(text)
    copy = _workflow_comparing("d-flow", True)  # b-flow's steps, spread over other lines
    (directory / "d-flow.yaml").write_text(yaml.safe_dump(copy, sort_keys=False))
    batch = run("validate", str(directory), "--format", "json")
    assert batch.returncode == 1, batch
    together = _diagnostics(json.loads(batch.stdout))
    alone = {}
    for path in sorted(directory.iterdir()):
        single = run("validate", str(path), "--format", "json")
        alone.update(_diagnostics(json.loads(single.stdout)))
    assert together == alone
    wrong_operand = {
        name: [(d["code"], d["line"]) for d in found if d["code"] in ("WR402", "WR403")]
        for name, found in together.items()
    }
    yaml_lines = (directory / "d-flow.yaml").read_text().splitlines()
    minimum, gt = (
        next(n for n, text in enumerate(yaml_lines, 1) if key in text)
        for key in ("minimum:", "gt:")
    )
    assert wrong_operand == {
        "a-flow.json": [],
        "b-flow.json": [("WR403", 1), ("WR402", 1)],
        "c-flow.json": [("WR403", 1), ("WR402", 1)],
        "d-flow.yaml": [("WR403", minimum), ("WR402", gt)],
    }


def test_console_script_writes_the_whole_report_before_it_exits(tmp_path: Path) -> None:
    """The console script ends `workrail validate` without freeing what it built (os._exit):
    a report far larger than a pipe's buffer still arrives whole, as the in-process run's."""
    from click.testing import CliRunner

    from workrail_engine.cli import cli

    directory = tmp_path / "workflows"
    directory.mkdir()
    for n in range(150):
        (directory / f"bad-{n:03d}.json").write_text(BAD.replace('"bad"', f'"bad-{n:03d}"'))
    args = ["validate", str(directory), "--format", "json"]
    process = run(*args)
    in_process = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert len(process.stdout) > 65536
    assert (process.returncode, process.stdout) == (in_process.exit_code, in_process.stdout)
    assert process.stderr == ""
