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
    """`steps.find_step` is the only one; the step-id pattern's single home is
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
        ("workrail_mcp.tools.binding", "ToolRegistry", "mcp_tools"),
        ("workrail_mcp.tools.binding", "ToolRegistry", "argument_error"),
        ("workrail_mcp.catalog_content", "CatalogContent", "owns_prompt"),
        ("workrail_engine.text.tolerant_document", "TolerantDocument", "has_errors"),
    ],
)
def test_dead_members_stay_gone(module, owner, member):
    """Members nothing called: they stay removed rather than drift."""
    import importlib

    assert not hasattr(getattr(importlib.import_module(module), owner), member)


def _imports(path) -> list[tuple[str, list[str]]]:
    """(module, names imported from it) for each import statement of a Python file."""
    import ast

    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import"
            found.append((node.module or "", [alias.name for alias in node.names]))
    return found


def _package_files(package: str):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    return sorted((root / package.replace(".", "/")).rglob("*.py"))


def _is_private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def test_the_dashboard_is_an_app_on_the_web_host_not_on_mcp():
    """The dashboard imports no MCP protocol module (neither the SDK nor the MCP adapter): of
    `workrail_mcp` it sees only the web host's public names."""
    found = []
    for path in _package_files("workrail_mcp.dashboard"):
        for module, names in _imports(path):
            top = module.split(".")[0]
            if top in ("mcp", "mcp_types"):
                found.append(f"{path.name}: {module}")
            elif top == "workrail_mcp" and not module.startswith("workrail_mcp.dashboard"):
                if module != "workrail_mcp.web" and not module.startswith("workrail_mcp.web."):
                    found.append(f"{path.name}: {module}")
                elif _is_private(module) or any(_is_private(name) for name in names):
                    found.append(f"{path.name}: {module} {names}")
    assert found == []


def test_the_web_host_speaks_no_mcp():
    """The web host serves the MCP endpoint and the dashboard alike: it imports neither, and of
    the SDK only its Host/Origin and body-size middleware (shared so both refuse alike)."""
    found = []
    for path in _package_files("workrail_mcp.web"):
        for module, _names in _imports(path):
            top = module.split(".")[0]
            if top == "mcp_types" or (top == "mcp" and module != "mcp.server.transport_security"):
                found.append(f"{path.name}: {module}")
            elif top == "workrail_mcp" and not module.startswith("workrail_mcp.web"):
                found.append(f"{path.name}: {module}")
    assert found == []


def test_no_private_name_of_the_web_host_is_imported_elsewhere():
    """Modules outside `workrail_mcp.web` use its public names only (the dashboard's command once
    imported `http._security` and `http._host_port`)."""
    found = []
    for path in _package_files("workrail_mcp"):
        if "web" in path.parts:
            continue
        for module, names in _imports(path):
            if module.startswith(("workrail_mcp.web", "workrail_mcp.http")) and (
                _is_private(module) or any(_is_private(name) for name in names)
            ):
                found.append(f"{path.name}: {module} {names}")
    assert found == []


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
    """Answering a step is the answers package's: sessions build on it, never on
    runs — not at module level, not inside a function."""
    assert _imports_between("sessions", "runs") == []


def test_runs_import_sessions_only_to_serve_a_sessions_id():
    """The run service is the one facade the front ends call, for a session's id too, and the
    history reads the session tables by their names (a session's lineage by the store's one
    query of it, `read_lineage`); those are the only reasons runs know sessions. Nothing of
    answering comes from sessions."""
    assert _imports_between("runs", "sessions") == [
        "runs/history.py imports workrail_engine.sessions.store",
        "runs/history.py imports workrail_engine.sessions.store.SESSION_TABLES",
        "runs/history.py imports workrail_engine.sessions.store.read_lineage",
        "runs/service.py imports workrail_engine.sessions.service",
        "runs/service.py imports workrail_engine.sessions.service.SessionService",
        "runs/service.py imports workrail_engine.sessions.service.SessionStep",
    ]


FIRST_PARTY = ("workrail_engine", "workrail_mcp", "workrail_lsp")


def _private_owner(module: str) -> str | None:
    """The package a private (``_name``) module belongs to, or None for a public module."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def test_no_module_imports_another_packages_private_module():
    """A ``_name`` module is private to its package (and the packages inside it): what another
    package needs is a public module, so that a newcomer can tell the API from the internals."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = []
    for top in FIRST_PARTY:
        for path in _package_files(top):
            package = ".".join(path.parent.relative_to(root).parts)
            for module in sorted(_imported_modules(path, package)):
                owner = _private_owner(module)
                if module.split(".")[0] not in FIRST_PARTY or owner is None:
                    continue
                if package != owner and not package.startswith(f"{owner}."):
                    found.append(f"{path.relative_to(root)} imports {module}")
    assert found == []


def _lines_holding(text: str, packages: tuple[str, ...]) -> list[str]:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    return [
        f"{path.relative_to(root)}:{number}"
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if text in line
    ]


def test_the_tools_results_are_typed_not_silenced():
    """The run service returns typed results and the tools declare them: a result
    that does not match its declared type is a mismatch to fix, not to silence."""
    assert _lines_holding("type: ignore[return-value]", ("workrail_mcp/tools",)) == []


def test_a_catalog_is_typed_by_its_protocol():
    """What the front ends and the run service ask of a catalog is `CatalogProtocol`."""
    packages = ("workrail_engine", "workrail_mcp", "workrail_lsp")
    assert _lines_holding("catalog: Any", packages) == []
