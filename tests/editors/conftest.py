"""The VS Code extension built once per test session, whichever pytest-xdist worker asks first."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from filelock import FileLock
from system_packages import opt_in, require
from vscode_build import EXTENSION, VSCODE_SWITCH, run, with_node_modules


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of editors/vscode with its node_modules (`npm ci`'s, made once per machine: see
    `with_node_modules`) and `npm run package` done: `workrail.vsix` inside.

    Built once per run: pytest-xdist's workers share the parent of their temporary directories
    (without xdist the run's own one is used), and the first one to take the lock builds there.
    Only with WORKRAIL_TESTS_VSCODE=1 (system_packages.opt_in). Without npm the tests skip
    (fail under CI=true); if the npm registry cannot be reached for the first `npm ci` this
    fails."""
    opt_in(VSCODE_SWITCH)
    require("npm")
    npm = shutil.which("npm")
    assert npm
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    copy = shared / "vscode-extension"
    with FileLock(shared / "vscode-extension.lock"):
        if not (copy / "workrail.vsix").exists():
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(
                EXTENSION, copy, ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix")
            )
            with_node_modules(copy, npm)
            run([npm, "run", "package"], copy)
    return copy
