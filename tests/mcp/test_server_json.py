"""server.json, the entry of the official MCP Registry, is valid against the registry's published
schema and agrees with the package: its version, the README's `mcp-name:` line the registry reads
to verify the PyPI package, the arguments `workrail-mcp` takes, the environment it reads.

The schema is vendored (tests/fixtures/mcp_registry/server.schema.json), byte for byte the file
published at its `$id`; SCHEMA_SHA256 is that file's digest."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest

from workrail_mcp.http import MCP_PATH

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = REPO / "tests" / "fixtures" / "mcp_registry" / "server.schema.json"
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
SOURCES = ("workrail_engine", "workrail_mcp")


@pytest.fixture(scope="module")
def server() -> dict:
    return json.loads((REPO / "server.json").read_text(encoding="utf-8"))


def test_the_vendored_schema_is_the_published_file():
    data = SCHEMA_FILE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256
    assert json.loads(data)["$id"] == SCHEMA_URL


def test_server_json_is_valid_against_the_registry_schema(server):
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert server["$schema"] == schema["$id"]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(server)]
    assert not problems, problems


def test_the_schema_catches_what_the_registry_refuses(server):
    """The validation above can fail: a description past the registry's 100 characters, a
    package version of 'latest'."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    too_long = {**server, "description": "x" * 101}
    latest = {**server, "packages": [{**server["packages"][0], "version": "latest"}]}
    for entry in (too_long, latest):
        assert list(jsonschema.Draft7Validator(schema).iter_errors(entry))


def test_the_readme_carries_the_registry_name_and_the_versions_agree(server):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"mcp-name: (\S+)", readme) == [server["name"]]
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {server["version"]} | {p["version"] for p in server["packages"]} == {project["version"]}
    assert {p["identifier"] for p in server["packages"]} == {project["name"]}
    assert "workrail-mcp" in project["scripts"]


def test_the_packages_arguments_are_workrail_mcps_own(server):
    shown = subprocess.run(
        [sys.executable, "-m", "workrail_mcp", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for package in server["packages"]:
        for argument in package.get("packageArguments", []):
            assert re.search(rf"^\s+{argument['name']}\b", shown, re.M), argument["name"]
            if "default" in argument:
                option = shown[shown.index(argument["name"]) :]
                assert f"[default: {argument['default']}]" in option.split("\n  -")[0], argument
    (http,) = [p for p in server["packages"] if p["transport"]["type"] == "streamable-http"]
    assert http["transport"]["url"] == "http://127.0.0.1:{port}" + MCP_PATH
    assert {"name": "--transport", "type": "named", "value": "http"} in http["packageArguments"]


def test_every_environment_variable_is_one_the_server_reads(server):
    source = "\n".join(
        path.read_text(encoding="utf-8")
        for package in SOURCES
        for path in (REPO / package).rglob("*.py")
    )
    for package in server["packages"]:
        for variable in package.get("environmentVariables", []):
            assert f'"{variable["name"]}"' in source, variable["name"]
