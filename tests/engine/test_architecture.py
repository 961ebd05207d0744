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
    bad = _after_importing(
        modules,
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'pygls', 'lsprotocol', 'workrail_mcp', 'workrail_lsp', 'starlette', 'jinja2'))))\n",
    )
    assert bad == "", f"protocol modules imported by the engine: {bad}"


def _after_importing(modules: list[str] | tuple[str, ...], then: str) -> str:
    """What ``then`` prints in a fresh interpreter that imported ``modules`` first."""
    script = (
        f"import importlib, sys\nfor name in {modules!r}:\n    importlib.import_module(name)\n"
    ) + then
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


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
        ("workrail_engine.text.tolerant_document", "TolerantDocument", "has_errors"),
    ],
)
def test_dead_members_stay_gone(module, owner, member):
    """Members nothing called (issue 12 §4): they stay removed rather than drift."""
    import importlib

    assert not hasattr(getattr(importlib.import_module(module), owner), member)


TOLERANT_TREE_PARTS = (
    "workrail_engine.text.tolerant_tree",
    "workrail_engine.text.tolerant_scalars",
    "workrail_engine.text.tree_sitter_offsets",
    "workrail_engine.text.tree_sitter_bounds",
    "workrail_engine.text.json_recovery",
    "workrail_engine.text.tolerant_json",
    "workrail_engine.text.tolerant_yaml",
    "workrail_engine.text.strict_tree",
    "workrail_engine.text.cursor",
)


def test_the_tolerant_trees_parts_sit_below_the_document_and_load_no_grammar():
    """``tolerant_document`` puts the parts of the tree together and none of them imports it
    back; importing them loads no tree-sitter (its parser is made on the first parse, ~10 ms)."""
    printed = _after_importing(
        TOLERANT_TREE_PARTS,
        "above = 'workrail_engine.text.tolerant_document' in sys.modules\n"
        "importlib.import_module('workrail_engine.text.tolerant_document')\n"
        "print(above, sorted(m for m in sys.modules if m.startswith('tree_sitter')))\n",
    )
    assert printed == "False []"
