"""The VS Code extension builds offline into a .vsix whose manifest is what the server needs.

Runs `npm ci` and `npm run package` in a temporary copy (npm's cache under /tmp), only with
WORKRAIL_TESTS_VSCODE=1 (tests/editors/vscode_build.py). If the npm registry cannot be reached this
test fails: it does not skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from vscode_build import run

pytestmark = pytest.mark.slow


def test_vsix_manifest(built: Path):
    with zipfile.ZipFile(built / "workrail.vsix") as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
        grammars = {
            g["language"]: json.loads(vsix.read("extension/" + g["path"].removeprefix("./")))
            for g in manifest["contributes"]["grammars"]
        }
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
    # Workflow files get languages of their own, so VS Code's JSON service never speaks about
    # them next to our server (no jsonValidation contribution, no schema shipped twice).
    assert "jsonValidation" not in manifest["contributes"]
    assert not any(n.startswith("extension/schemas/") for n in names)
    languages = {lang["id"]: lang for lang in manifest["contributes"]["languages"]}
    assert "*.workflow.json" in languages["workrail-json"]["filenamePatterns"]
    assert "*.workflow.yaml" in languages["workrail-yaml"]["filenamePatterns"]
    assert grammars["workrail-json"]["patterns"] == [{"include": "source.json"}]
    assert grammars["workrail-yaml"]["patterns"] == [{"include": "source.yaml"}]
    assert {"onLanguage:workrail-json", "onLanguage:workrail-yaml"} <= set(events)


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
    assert "Install WorkRail Kit" in message and "workrail.server.pythonPath" in message


SERVER_SETTINGS = ("workrail.server.path", "workrail.server.pythonPath", "workrail.server.args")


def test_a_workspace_cannot_choose_the_program_the_extension_starts(built: Path):
    """A repository's `.vscode/settings.json` set `workrail.server.path` (or
    `pythonPath`, `args`), and opening the trusted workspace ran its command. Application scope
    makes VS Code ignore workspace values of them (machine scope would too, but in a remote
    window, code-server's included, it ignores the user's settings as well: the server was not
    found); the extension reads only the user's value or the
    default (`userValue` over `inspect()`), and waits for trust before it starts anything."""
    with zipfile.ZipFile(built / "workrail.vsix") as vsix:
        manifest = json.loads(vsix.read("extension/package.json"))
    settings = manifest["contributes"]["configuration"]["properties"]
    assert {name: settings[name].get("scope") for name in SERVER_SETTINGS} == dict.fromkeys(
        SERVER_SETTINGS, "application"
    )
    # The other settings (globs, folders) stay per workspace: they choose files, not programs.
    assert "scope" not in settings["workrail.workflowGlobs"]
    assert manifest["capabilities"]["untrustedWorkspaces"]["supported"] is False
    hostile = {
        "defaultValue": "workrail-lsp",
        "workspaceValue": "/tmp/evil",
        "workspaceFolderValue": "/tmp/evil",
    }
    assert node_eval(built, f"s.userValue({json.dumps(hostile)})") == "workrail-lsp"
    mine = {**hostile, "globalValue": "/opt/workrail-lsp"}
    assert node_eval(built, f"s.userValue({json.dumps(mine)})") == "/opt/workrail-lsp"
    source = (built / "src" / "extension.ts").read_text()
    for name in SERVER_SETTINGS:
        key = name.removeprefix("workrail.")
        assert "userValue(settings.inspect<" in source and f'("{key}")' in source
        assert f'settings.get<string>("{key}")' not in source
        assert f'settings.get<string[]>("{key}")' not in source
