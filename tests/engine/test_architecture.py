"""The engine stays protocol-free: importing all of it pulls in neither the MCP SDK nor pygls, nor
the web stack of the dashboard (starlette, jinja2)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import workrail_engine


def test_engine_imports_no_protocol_library():
    modules = sorted(
        m.name for m in pkgutil.walk_packages(workrail_engine.__path__, "workrail_engine.")
    )
    assert "workrail_engine.lint" in modules and "workrail_engine.catalog" in modules
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'pygls', 'lsprotocol', 'workrail_mcp', 'workrail_lsp', 'starlette', 'jinja2'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"protocol modules imported by the engine: {result.stdout}"
