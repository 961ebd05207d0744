"""Settings through initializationOptions and workspace/configuration decide what is a workflow."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from lsp_harness import (
    CLIENTS,
    Session,
    answer_registrations,
    initialize_params,
    record_publications,
)
from pytest_lsp import ClientServerConfig, LanguageClient
from raw_lsp import RawLspServer

BROKEN = json.dumps(
    {"id": "cfg-flow", "name": "C", "steps": [{"id": "one", "title": "T", "promt": "p"}]}, indent=2
)


async def started(name, root, options=None, configuration=None) -> tuple[LanguageClient, Session]:
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "workrail_lsp"]).start()
    if configuration is not None:
        client.set_configuration(configuration, section="workrail")
    published = record_publications(client)
    answer_registrations(client)
    await client.initialize_session(initialize_params(name, root, options))
    return client, Session(client, name, root, published)


@pytest.mark.parametrize("name", list(CLIENTS))
async def test_initialization_options_set_the_workflow_globs(tmp_path, name):
    client, session = await started(
        name, tmp_path, options={"workrail": {"workflowGlobs": ["**/*.wr.json"]}}
    )
    try:
        custom = session.open("mine.wr.json", BROKEN)
        assert "WR102" in [d.code for d in await session.diagnostics(custom)]
        default = session.open("cfg-flow.workflow.json", BROKEN)
        assert await session.diagnostics(default) == []  # the default globs were replaced
        by_schema = session.open(
            "any.json", '{"$schema": "https://workrail.dev/schema/workflow.schema.json", "id": 3}'
        )
        assert await session.diagnostics(by_schema)  # $schema always marks a workflow
    finally:
        await client.shutdown_session()
        await client.stop()


@pytest.mark.parametrize("name", list(CLIENTS))
async def test_workspace_configuration_adds_workflow_folders(tmp_path, name):
    extra = tmp_path / "elsewhere"
    extra.mkdir()
    client, session = await started(
        name, tmp_path, configuration={"extraWorkflowDirs": [str(extra)]}
    )
    try:
        # Opened at once: the server asks for workspace/configuration after `initialized`, and
        # its first diagnostics wait for the answer (pull clients are sent a refresh).
        uri = (extra / "cfg-flow.json").as_uri()
        session.root = extra
        session.open("cfg-flow.json", BROKEN)
        codes = [d.code for d in await session.diagnostics(uri)]
        assert "WR102" in codes
        outside = tmp_path / "plain.json"
        session.root = tmp_path
        session.open("plain.json", BROKEN)
        assert await session.diagnostics(outside.as_uri()) == []
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_debug_logging_goes_to_stderr_and_stdout_stays_protocol(tmp_path, capfd):
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "workrail_lsp", "--log-level", "DEBUG"]
    )
    client = await config.start()
    published = record_publications(client)
    answer_registrations(client)
    try:
        result = await client.initialize_session(initialize_params("vscode", tmp_path))
        assert result.server_info.name == "workrail-lsp"
        session = Session(client, "vscode", tmp_path, published)
        uri = session.open("cfg-flow.workflow.json", BROKEN)
        assert "WR102" in [d.code for d in await session.diagnostics(uri)]
    finally:
        await client.shutdown_session()
        await client.stop()
    assert client.error is None  # any non-protocol byte on stdout would have been a fatal error
    assert (
        "workrail-lsp DEBUG" in capfd.readouterr().err
    )  # the server's stderr, forwarded by pytest-lsp


def _publishes_for(uri: str, count: int) -> Any:
    def found(seen: list[dict[str, Any]]) -> list[list[dict[str, Any]]] | None:
        published = [
            m["params"]["diagnostics"]
            for m in seen
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        ]
        return published if len(published) >= count else None

    return found


def test_settings_that_unmake_a_workflow_clear_its_diagnostics_at_once(tmp_path):
    """A settings change after which an open document is no longer a workflow: its diagnostics
    are published empty, and pulled empty, right away (the report of a document whose state the
    change dropped was kept, and served again, until the workspace scan next changed)."""
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "task.flow.json"
    path.write_text(BROKEN)
    server = RawLspServer(root)
    try:
        server.initialize(
            {}, initializationOptions={"workrail": {"workflowGlobs": ["**/*.flow.json"]}}
        )
        uri = server.open(path, BROKEN)
        (first,) = server.wait_for(_publishes_for(uri, 1))
        assert first, "the document is a workflow under the first settings"
        pulled = {"textDocument": {"uri": uri}}
        assert server.call("textDocument/diagnostic", pulled)["result"]["items"] == first
        server.notify(
            "workspace/didChangeConfiguration",
            {"settings": {"workrail": {"workflowGlobs": ["**/*.other.json"]}}},
        )
        # (a publish with the old diagnostics may come first: the scan's end refreshes them)
        server.wait_for(lambda seen: [] in _publishes_for(uri, 1)(seen) or None, timeout=20)
        assert server.call("textDocument/diagnostic", pulled)["result"]["items"] == []
    finally:
        assert server.close() == 0
