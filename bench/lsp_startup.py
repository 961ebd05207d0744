"""Benchmark: how long the language server takes from process start to answering ``initialize``,
and to the first diagnostics of an opened workflow.

Processes started in turns so that load changes hit them alike, each timed from spawn:
- ``import lsprotocol.types`` alone, then exit (the floor for any pygls server);
- a bare ``pygls.lsp.server.LanguageServer`` with no features, until it answers ``initialize``;
- ``python -m workrail_lsp`` (the editor's command): until it answers ``initialize``, then, after
  ``initialized`` and ``didOpen`` of a bundled workflow, until its diagnostics arrive;
- the same server with its fast start turned off (``--no-fast-start``: pygls reads everything
  itself; ``workrail_lsp/fast_start/``): the same two times;
- with ``--earlier DIR`` (a checkout of an earlier commit, e.g. ``git worktree add DIR COMMIT``),
  that checkout's ``python -m workrail_lsp``: the same two times.
- with ``--large-root``, ``python -m workrail_lsp`` (and the earlier checkout's) with a workspace
  root: one holding only the workflow, and one of 200,000 files (20,000 small JSON and 4,000 YAML
  files among them, as a JavaScript monorepo's vendored packages hold, made once in a temporary
  folder); a pull client (``textDocument/diagnostic``) opens the workflow right after
  ``initialized``: until its first pulled diagnostics (the same whatever the root: the workspace scan never holds it up).

    python bench/lsp_startup.py [--runs 7] [--earlier DIR] [--large-root]

Prints medians and bests, and the differences that the goal is about (within 0.1 s of the floor).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / "workflows" / "coding-task.json"
BARE_PYGLS = "from pygls.lsp.server import LanguageServer\nLanguageServer('bare', '1').start_io()\n"


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(stdout) -> dict:
    length = 0
    while line := stdout.readline().strip():
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stdout.read(length))


def spawn(command: list[str], code: Path | None = None) -> subprocess.Popen[bytes]:
    """The server process on pipes; ``code``: a checkout whose packages it imports instead."""
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=code,  # ``-m`` puts the working directory first on sys.path
        env={**os.environ, "PYTHONPATH": str(code)} if code else None,
    )


def make_large_root(root: Path, files: int = 200_000) -> None:
    """``files`` files in folders of 100 (one JSON and one in six a YAML file of every ten), and
    the workflow under ``workflows/``."""
    (root / "workflows").mkdir(parents=True)
    shutil.copy(WORKFLOW, root / "workflows" / WORKFLOW.name)
    for n in range(files):
        folder = root / "vendor" / f"pkg-{n // 100:04d}"
        if n % 100 == 0:
            folder.mkdir(parents=True)
        if n % 10 == 0:
            (folder / f"package-{n}.json").write_text(f'{{"name": "pkg-{n}", "version": "1.0.0"}}')
        elif n % 50 == 1:
            (folder / f"config-{n}.yaml").write_text(f"name: pkg-{n}\nversion: 1.0.0\n")
        else:
            (folder / f"module-{n}.js").write_text("module.exports = {};\n")


def pulled(
    command: list[str], root: Path, code: Path | None = None
) -> tuple[float, float | None, float]:
    """Seconds from spawn to the ``initialize`` answer and to the first pulled diagnostics of the
    workflow under ``root``, opened right after ``initialized``; and the CPU seconds used."""
    began = time.perf_counter()
    process = spawn(command, code)
    assert process.stdin is not None and process.stdout is not None
    capabilities = {"textDocument": {"diagnostic": {}}}
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities}
    process.stdin.write(
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    )
    process.stdin.flush()
    assert _read(process.stdout).get("id") == 1
    initialized = time.perf_counter() - began
    path = root / "workflows" / WORKFLOW.name
    document = {"uri": path.as_uri(), "languageId": "json", "version": 1, "text": path.read_text()}
    for message in (
        {"method": "initialized", "params": {}},
        {"method": "textDocument/didOpen", "params": {"textDocument": document}},
        {"id": 2, "method": "textDocument/diagnostic", "params": {"textDocument": document}},
    ):
        process.stdin.write(_frame({"jsonrpc": "2.0", **message}))
    process.stdin.flush()
    while True:
        message = _read(process.stdout)
        if message.get("id") == 2 and "method" not in message:
            assert "result" in message, message
            break
    diagnosed = time.perf_counter() - began
    process.kill()
    return initialized, diagnosed, _cpu_seconds(process)


def session(
    command: list[str], open_document: bool, code: Path | None = None
) -> tuple[float, float | None, float]:
    """Seconds from spawn to the ``initialize`` answer; with ``open_document``, also to the first
    ``publishDiagnostics`` for the workflow opened right after; and the CPU seconds used by then
    (the process is idle once it has answered, until it is killed). ``code``: a checkout whose
    packages the server is imported from instead of this one's."""
    began = time.perf_counter()
    process = spawn(command, code)
    assert process.stdin is not None and process.stdout is not None
    params = {"processId": None, "rootUri": None, "capabilities": {}}
    process.stdin.write(
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    )
    process.stdin.flush()
    response = _read(process.stdout)
    initialized = time.perf_counter() - began
    assert response.get("id") == 1 and "result" in response, response
    diagnosed = None
    if open_document:
        uri = WORKFLOW.as_uri()
        document = {"uri": uri, "languageId": "json", "version": 1, "text": WORKFLOW.read_text()}
        for method, params in (
            ("initialized", {}),
            ("textDocument/didOpen", {"textDocument": document}),
        ):
            process.stdin.write(_frame({"jsonrpc": "2.0", "method": method, "params": params}))
        process.stdin.flush()
        while True:
            message = _read(process.stdout)
            if message.get("method") == "textDocument/publishDiagnostics":
                assert message["params"]["uri"] == uri, message
                break
        diagnosed = time.perf_counter() - began
    process.kill()
    return initialized, diagnosed, _cpu_seconds(process)


def until_exit(command: list[str]) -> tuple[float, None, float]:
    began = time.perf_counter()
    process = subprocess.Popen(command)
    cpu = _cpu_seconds(process)
    return time.perf_counter() - began, None, cpu


def _cpu_seconds(process: subprocess.Popen[bytes]) -> float:
    # CPU time varies far less than wall time on a machine other processes load.
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


FLOOR = "import lsprotocol.types"
BARE = "bare pygls server"
OURS = "workrail-lsp"
WITHOUT = "without the fast start"
EARLIER = "the earlier checkout"
INITIALIZED, DIAGNOSED = "→ initialize", "→ first diagnostics"


SMALL_ROOT = "root holding only the workflow"
LARGE_ROOT = "root of 200,000 files"


def main(runs: int, earlier: Path | None, large_root: Path | None) -> None:
    python = sys.executable
    server = [python, "-m", "workrail_lsp"]
    cases = {
        FLOOR: lambda: until_exit([python, "-c", "import lsprotocol.types"]),
        BARE: lambda: session([python, "-c", BARE_PYGLS], open_document=False),
        OURS: lambda: session(server, open_document=True),
        WITHOUT: lambda: session([*server, "--no-fast-start"], open_document=True),
    }
    if earlier is not None:
        cases[EARLIER] = lambda: session(server, True, earlier.resolve())
    if large_root is not None:
        small = large_root.parent / "small-root"
        if not small.exists():
            (small / "workflows").mkdir(parents=True)
            shutil.copy(WORKFLOW, small / "workflows" / WORKFLOW.name)
        cases[f"{OURS}, pulled, {SMALL_ROOT}"] = lambda: pulled(server, small)
        cases[f"{OURS}, pulled, {LARGE_ROOT}"] = lambda: pulled(server, large_root)
        if earlier is not None:
            code = earlier.resolve()
            cases[f"{EARLIER}, pulled, {SMALL_ROOT}"] = lambda: pulled(server, small, code)
            cases[f"{EARLIER}, pulled, {LARGE_ROOT}"] = lambda: pulled(server, large_root, code)
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for _ in range(runs):
        for name, measure in cases.items():
            initialized, diagnosed, used = measure()
            label = name if name == FLOOR else f"{name} {INITIALIZED}"
            wall.setdefault(label, []).append(initialized * 1000)
            if diagnosed is not None:
                label = f"{name} {DIAGNOSED}"
                wall.setdefault(label, []).append(diagnosed * 1000)
            cpu.setdefault(label, []).append(used * 1000)  # until the last answer it waited for
    print(f"runs: {runs}; load average {os.getloadavg()[0]:.2f}\n")
    print("| process | wall median | wall best |\n|---|---|---|")
    for name, figures in wall.items():
        print(f"| {name} | {statistics.median(figures):.0f} ms | {min(figures):.0f} ms |")
    print("\nCPU used by each process until its last answer (it was then killed):\n")
    print("| process | CPU median | CPU best |\n|---|---|---|")
    for name, figures in cpu.items():
        print(f"| {name} | {statistics.median(figures):.0f} ms | {min(figures):.0f} ms |")

    def over(ours: str, base: str) -> str:
        # Each round starts the processes one after the other: the difference within a round
        # sees the same load, so its median says more than the difference of medians.
        pairs = zip(wall[ours], wall[base], strict=True)
        return f"{statistics.median(o - b for o, b in pairs):+.0f} ms"

    lines = [
        ("answering initialize, ours − lsprotocol alone", f"{OURS} {INITIALIZED}", FLOOR),
        (
            "answering initialize, ours − a bare pygls server",
            f"{OURS} {INITIALIZED}",
            f"{BARE} {INITIALIZED}",
        ),
        (
            "answering initialize, ours − without the fast start",
            f"{OURS} {INITIALIZED}",
            f"{WITHOUT} {INITIALIZED}",
        ),
        ("first diagnostics, ours − lsprotocol alone", f"{OURS} {DIAGNOSED}", FLOOR),
        (
            "first diagnostics, ours − without the fast start",
            f"{OURS} {DIAGNOSED}",
            f"{WITHOUT} {DIAGNOSED}",
        ),
    ]
    if earlier is not None:
        lines += [
            (
                "answering initialize, ours − the earlier checkout",
                f"{OURS} {INITIALIZED}",
                f"{EARLIER} {INITIALIZED}",
            ),
            (
                "first diagnostics, ours − the earlier checkout",
                f"{OURS} {DIAGNOSED}",
                f"{EARLIER} {DIAGNOSED}",
            ),
        ]
    if large_root is not None:
        for name in (OURS, EARLIER) if earlier is not None else (OURS,):
            lines += [
                (
                    f"first pulled diagnostics ({name}), {LARGE_ROOT} − {SMALL_ROOT}",
                    f"{name}, pulled, {LARGE_ROOT} {DIAGNOSED}",
                    f"{name}, pulled, {SMALL_ROOT} {DIAGNOSED}",
                ),
                (
                    f"first pulled diagnostics ({name}), {LARGE_ROOT} − lsprotocol alone",
                    f"{name}, pulled, {LARGE_ROOT} {DIAGNOSED}",
                    FLOOR,
                ),
            ]
    print(
        "\nmedians of the rounds' wall-time differences (goal: answering initialize ≤ +100 ms over lsprotocol alone):"
    )
    for text, ours, base in lines:
        print(f"- {text}: {over(ours, base)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--earlier", type=Path, help="a checkout of an earlier commit to compare")
    parser.add_argument(
        "--large-root",
        action="store_true",
        help="also open the workflow in a root of 200,000 files",
    )
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="workrail-bench-root-") as folder:
        root = None
        if arguments.large_root:
            root = Path(folder) / "large-root"
            began = time.perf_counter()
            make_large_root(root)
            print(f"made {root} in {time.perf_counter() - began:.0f} s")
        main(arguments.runs, arguments.earlier, root)
