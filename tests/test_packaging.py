"""The wheel carries the schema, the bundled workflows, the language server's recorded
``initialize`` answer, the MCP tools' recorded schemas, the dashboard's templates and static
files, and its console scripts."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contents(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    [wheel] = tmp_path.glob("workrail_kit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "workrail_engine/schema/workflow.schema.json" in names
    bundled = {Path(n).name for n in names if n.startswith("workrail_engine/bundled_workflows/")}
    assert bundled == {p.name for p in (ROOT / "workflows").glob("*.json")}
    assert {"workrail_mcp/__main__.py", "workrail_lsp/__main__.py"} <= names
    # the language server answers initialize from it before pygls is loaded
    assert "workrail_lsp/fast_start/initialize_result.json" in names
    # the MCP tools' recorded schemas (without them every start derives them again)
    assert "workrail_mcp/tools/tool_schemas.json" in names
    # the dashboard's templates and static files (nothing of it is fetched at run time)
    dashboard = ROOT / "workrail_mcp" / "dashboard"
    shipped = {
        p.relative_to(ROOT).as_posix()
        for folder in ("templates", "static")
        for p in (dashboard / folder).iterdir()
    }
    assert shipped and shipped <= names, shipped - names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    scripts = zipfile.ZipFile(wheel).read(entry_points).decode()
    for script in (
        "workrail = workrail_engine.cli:main",
        "workrail-mcp = workrail_mcp.__main__:main",
        "workrail-lsp = workrail_lsp.__main__:main",
        "workrail-kit = workrail_mcp.__main__:main",  # `uvx workrail-kit`, as server.json says
    ):
        assert script in scripts


def test_no_document_says_to_pip_install_an_unpublished_package():
    """workrail-kit is not on PyPI: installing by its name would fail."""
    root = Path(__file__).resolve().parents[1]
    documents = [root / "README.md", *root.glob("docs/*.md"), *root.glob("editors/*/README.md")]
    saying = [
        str(p.relative_to(root)) for p in documents if "install workrail-kit" in p.read_text()
    ]
    assert saying == []
