"""The VS Code extension builds offline into a .vsix whose manifest is what the server needs.

Runs `npm ci` and `npm run package` in a temporary copy (npm's cache under /tmp). If the npm
registry cannot be reached this test fails: it does not skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
SCHEMA = REPO / "workrail_engine" / "schema" / "workflow.schema.json"
NPM_CACHE = Path("/tmp/workrail-npm-cache")


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (
        f"{' '.join(command)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm = shutil.which("npm")
    assert npm, "npm is required to build the VS Code extension"
    copy = tmp_path_factory.mktemp("vscode") / "extension"
    shutil.copytree(
        EXTENSION, copy, ignore=shutil.ignore_patterns("node_modules", "out", "schemas", "*.vsix")
    )
    run([npm, "ci", "--no-audit", "--no-fund", "--cache", str(NPM_CACHE)], copy)
    run([npm, "run", "package"], copy, WORKRAIL_SCHEMA=str(SCHEMA))
    return copy


def test_vsix_manifest(built: Path):
    with zipfile.ZipFile(built / "workrail.vsix") as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
        schema = json.loads(vsix.read("extension/schemas/workflow.schema.json"))
    assert "extension/out/extension.js" in names and "extension/out/serverCommand.js" in names
    assert any(n.startswith("extension/node_modules/vscode-languageclient/") for n in names)
    assert not any(n.startswith("extension/src/") for n in names)
    assert manifest["main"] == "./out/extension.js"
    events = manifest["activationEvents"]
    assert "onLanguage:json" in events and "workspaceContains:**/*.workflow.json" in events
    settings = manifest["contributes"]["configuration"]["properties"]
    assert settings["workrail.server.path"]["default"] == "workrail-lsp"
    assert {
        "workrail.server.pythonPath",
        "workrail.server.args",
        "workrail.workflowGlobs",
        "workrail.extraWorkflowDirs",
    } <= set(settings)
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    assert "workrail.validateWorkspace" in commands
    (validation,) = manifest["contributes"]["jsonValidation"]
    assert (
        "*.workflow.json" in validation["fileMatch"]
        and validation["url"] == "./schemas/workflow.schema.json"
    )
    assert schema == json.loads(SCHEMA.read_text())


def node_eval(built: Path, expression: str) -> object:
    script = f"const s = require('./out/serverCommand.js'); process.stdout.write(JSON.stringify({expression}));"
    return json.loads(run(["node", "-e", script], built).stdout)


def test_server_command_from_settings_starts_the_real_server(built: Path):
    default = node_eval(built, "s.serverCommand({})")
    assert default == {"command": "workrail-lsp", "args": []}
    python = node_eval(
        built,
        f"s.serverCommand({{pythonPath: {json.dumps(sys.executable)}, args: ['--log-level', 'INFO']}})",
    )
    assert python == {
        "command": sys.executable,
        "args": ["-m", "workrail_lsp", "--log-level", "INFO"],
    }
    version = subprocess.run(
        [python["command"], *python["args"], "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert version.returncode == 0 and version.stdout.startswith("workrail-lsp ")


def test_a_missing_server_is_reported_clearly(built: Path):
    assert node_eval(built, "s.findExecutable('workrail-lsp-not-here') === undefined")
    found = node_eval(
        built, f"s.findExecutable('workrail-lsp', {json.dumps(str(Path(sys.executable).parent))})"
    )
    assert found == str(Path(sys.executable).parent / "workrail-lsp")
    message = node_eval(built, "s.missingServerMessage('workrail-lsp')")
    assert "pip install workrail-kit" in message and "workrail.server.pythonPath" in message
