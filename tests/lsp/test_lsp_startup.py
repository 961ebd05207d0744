"""Start-up: before ``initialize`` the server imports pygls/lsprotocol and nothing heavy of ours."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["jsonschema_rs", "tree_sitter", "yaml", "workrail_engine.lint", "workrail_lsp.completion"]


def test_creating_the_server_imports_no_feature_or_engine_checker():
    code = (
        "import json, sys\n"
        "from workrail_lsp.server import create_language_server\n"
        "create_language_server()\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == []


def _modules_imported_until_initialized(command: list[str]) -> list[str]:
    """The modules a real server process imports until it has answered ``initialize`` over stdio
    (``-X importtime`` logs each import on stderr as it happens; the process is killed once the
    answer is read, while it waits for the next message)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        }
    ).encode()
    with subprocess.Popen(
        [sys.executable, "-X", "importtime", *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdin and process.stdout and process.stderr
        try:
            process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            process.stdin.flush()
            length = 0
            while line := process.stdout.readline().strip():
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            answer = json.loads(process.stdout.read(length))
            assert answer["id"] == 1 and "capabilities" in answer["result"]
        finally:
            process.kill()
        log = process.stderr.read().decode()
    return [line.rsplit("|", 1)[1].strip() for line in log.splitlines() if "|" in line]


def test_answering_initialize_imports_no_engine_document_or_checker():
    """The document states and the workspace index (the engine's parser and checkers behind
    them) are built on first use, after the client has its answer."""
    imported = _modules_imported_until_initialized(["-m", "workrail_lsp"])
    assert "lsprotocol.types" in imported and "workrail_lsp.server" in imported
    early = [
        m
        for m in (
            *HEAVY,
            "workrail_engine.document",
            "workrail_engine.diagnostics",
            "workrail_engine.tolerant_document",
            "workrail_lsp.documents",
            "workrail_lsp.workspace_index",
            "argparse",  # only for command lines other than an editor's (none, or --stdio)
        )
        if m in imported
    ]
    assert early == []
