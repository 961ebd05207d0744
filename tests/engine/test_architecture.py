"""The engine stays protocol-free: importing all of it pulls in neither the MCP SDK nor pygls, nor
the web stack of the dashboard (starlette, jinja2)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

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


def test_one_step_finder():
    """`steps.find_step` is the only one (issue 12 §4); the step-id pattern's single home is
    checked against the schema in test_schema.py."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    finders = []
    for package in ("workrail_engine", "workrail_lsp", "workrail_mcp"):
        for path in (root / package).rglob("*.py"):
            text = path.read_text()
            name = str(path.relative_to(root))
            if name != "workrail_engine/definition/steps.py":
                finders += [name for _ in re.finditer(r"def _?find_step\b", text)]
    assert finders == []


@pytest.mark.parametrize(
    "module, owner, member",
    [
        ("workrail_engine.runs.service", "RunService", "running_count"),
        ("workrail_engine.runs.secrets", "SecretSet", "masked_values"),
        ("workrail_engine.diagnostics", "Severity", "rank"),
        ("workrail_mcp.tools._binding", "ToolRegistry", "mcp_tools"),
        ("workrail_mcp.tools._binding", "ToolRegistry", "argument_error"),
        ("workrail_mcp.catalog_content", "CatalogContent", "owns_prompt"),
    ],
)
def test_dead_members_stay_gone(module, owner, member):
    """Members nothing called (issue 12 §4): they stay removed rather than drift."""
    import importlib

    assert not hasattr(getattr(importlib.import_module(module), owner), member)


def _imported_modules(path, package: str) -> set[str]:
    """Every module ``path`` imports (at module level or inside a function), absolute."""
    import ast

    tree = ast.parse(path.read_text())
    here = package.split(".")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def _imports_between(source: str, target: str) -> list[str]:
    from pathlib import Path

    root = Path(workrail_engine.__file__).parent
    found = []
    for path in sorted((root / source).rglob("*.py")):
        package = ".".join(["workrail_engine", *path.parent.relative_to(root).parts])
        for module in sorted(_imported_modules(path, package)):
            if module == f"workrail_engine.{target}" or module.startswith(
                f"workrail_engine.{target}."
            ):
                found.append(f"{path.relative_to(root)} imports {module}")
    return found


def test_sessions_import_nothing_of_runs():
    """Answering a step is the answers package's (issue 40 §1): sessions build on it, never on
    runs — not at module level, not inside a function."""
    assert _imports_between("sessions", "runs") == []


def test_runs_import_sessions_only_to_serve_a_sessions_id():
    """The run service is the one facade the front ends call, for a session's id too; that is
    the only reason runs know sessions. Nothing of answering comes from sessions (issue 40 §1)."""
    assert _imports_between("runs", "sessions") == [
        "runs/service.py imports workrail_engine.sessions.service",
        "runs/service.py imports workrail_engine.sessions.service.SessionService",
        "runs/service.py imports workrail_engine.sessions.service.SessionStep",
    ]
