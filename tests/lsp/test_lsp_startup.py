"""Start-up: ``initialize`` is answered before pygls is imported, and pygls's own handling of it
loads nothing heavy of ours (the engine's document model and checkers load on first use)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from raw_lsp import frame

from workrail_lsp.fast_start import ENVIRONMENT_SWITCH

HEAVY = ["jsonschema_rs", "tree_sitter", "yaml", "workrail_engine.lint", "workrail_lsp.completion"]


INITIALIZE = frame(
    {
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": None, "capabilities": {}},
    }
)


def _imports_and_log(
    stdin: bytes, *args: str, environment: dict[str, str] | None = None
) -> list[str]:
    """The real server's stderr under ``-X importtime``, which logs each import as it happens,
    in one stream with the server's own log lines."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workrail_lsp", "--log-level", "INFO", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env={**os.environ, **(environment or {})},
    )
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    return run.stderr.decode().splitlines()


def _modules(lines: list[str]) -> list[str]:
    return [line.rsplit("|", 1)[1].strip() for line in lines if "|" in line]


def test_creating_the_server_imports_no_feature_or_engine_checker():
    code = (
        "import json, sys\n"
        "from workrail_lsp.server import create_language_server\n"
        "create_language_server()\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == []


@pytest.fixture(scope="module")
def whole_session() -> list[str]:
    """One real server's stderr through initialize, initialized, shutdown and exit: the two
    tests below read different parts of the same session (one process instead of two)."""
    return _imports_and_log(
        b"".join(
            [
                INITIALIZE,
                frame({"method": "initialized", "params": {}}),
                frame({"id": 2, "method": "shutdown"}),
                frame({"method": "exit"}),
            ]
        )
    )


def test_initialize_is_answered_before_pygls_or_lsprotocol_is_imported(whole_session):
    lines = whole_session
    answered = next(i for i, line in enumerate(lines) if "answered initialize" in line)
    before = _modules(lines[:answered])
    assert "workrail_lsp.fast_start.handshake" in before
    assert [
        m for m in before if m.split(".")[0] in ("lsprotocol", "pygls", "cattrs", "asyncio")
    ] == []
    assert "click" in before  # --log-level; an editor's command line (none, or --stdio) skips it
    after = _modules(lines[answered:])
    assert "lsprotocol.types" in after and "pygls.lsp.server" in after


def test_handling_initialize_imports_no_engine_document_or_checker(whole_session):
    """The document states and the workspace index (the engine's parser and checkers behind
    them) are built on first use: pygls's handling of ``initialize`` and ``initialized`` (done
    once it answers ``shutdown``) imports none of them."""
    imported = _modules(whole_session)
    assert "workrail_lsp.server" in imported
    early = [
        m
        for m in (
            *HEAVY,
            "workrail_engine.text.document",
            "workrail_engine.diagnostics",
            "workrail_engine.text.tolerant_document",
            "workrail_engine.text.tolerant_tree",
            "workrail_lsp.documents",
            "workrail_lsp.workspace_index",
        )
        if m in imported
    ]
    assert early == []


def test_an_editors_command_line_does_not_load_argparse():
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workrail_lsp", "--stdio"],
        input=INITIALIZE + frame({"method": "exit"}),
        capture_output=True,
        timeout=60,
    )
    assert b'"id": 1' in run.stdout
    assert "argparse" not in _modules(run.stderr.decode().splitlines())


def test_the_server_process_collects_cyclic_garbage_less_often():
    """workrail_lsp.__main__ raises the young generation's threshold (parsing a large workflow
    allocates ~100,000 containers); the other generations' thresholds are left as they were."""
    code = (
        "import gc, json, sys\n"
        "from workrail_lsp.__main__ import YOUNG_GENERATION_THRESHOLD, main\n"
        "default = gc.get_threshold()\n"
        "main([])\n"
        "print(json.dumps([default, gc.get_threshold(), YOUNG_GENERATION_THRESHOLD]), file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        input=INITIALIZE + frame({"id": 2, "method": "shutdown"}) + frame({"method": "exit"}),
        capture_output=True,
        timeout=60,
    )
    default, tuned, young = json.loads(run.stderr.decode().strip().splitlines()[-1])
    assert default[0] < young and tuned == [young, *default[1:]]


SHUTDOWN = frame({"id": 2, "method": "shutdown"}) + frame({"method": "exit"})


@pytest.mark.parametrize(
    ("args", "environment"),
    [
        pytest.param(["--no-fast-start"], {}, id="--no-fast-start"),
        pytest.param([], {ENVIRONMENT_SWITCH: "0"}, id=f"{ENVIRONMENT_SWITCH}=0"),
    ],
)
def test_the_fast_start_can_be_turned_off(args, environment):
    """pygls answers ``initialize`` itself: it is imported before the answer is written, and
    none of the fast start's modules is imported at all."""
    lines = _imports_and_log(INITIALIZE + SHUTDOWN, *args, environment=environment)
    modules = _modules(lines)
    assert not any("answered initialize" in line for line in lines)
    assert "pygls.lsp.server" in modules and "workrail_lsp.server" in modules
    fast_start = [m for m in modules if m.startswith("workrail_lsp.fast_start.")]
    assert fast_start == []


def test_a_switch_value_that_is_not_a_boolean_is_refused_with_its_name():
    run = subprocess.run(
        [sys.executable, "-m", "workrail_lsp"],
        input=INITIALIZE,
        capture_output=True,
        timeout=60,
        env={**os.environ, ENVIRONMENT_SWITCH: "sometimes"},
    )
    assert run.returncode == 2 and run.stdout == b""
    assert ENVIRONMENT_SWITCH in run.stderr.decode() and "sometimes" in run.stderr.decode()
