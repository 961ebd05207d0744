"""The VS Code extension built once per test session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from vscode_build import EXTENSION, NPM_CACHE, run


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of editors/vscode with `npm ci` and `npm run package` done: `workrail.vsix` inside.

    If the npm registry cannot be reached this fails: it does not skip."""
    npm = shutil.which("npm")
    assert npm, "npm is required to build the VS Code extension"
    copy = tmp_path_factory.mktemp("vscode") / "extension"
    shutil.copytree(EXTENSION, copy, ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix"))
    run([npm, "ci", "--no-audit", "--no-fund", "--cache", str(NPM_CACHE)], copy)
    run([npm, "run", "package"], copy)
    return copy
