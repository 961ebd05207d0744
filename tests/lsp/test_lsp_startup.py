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
