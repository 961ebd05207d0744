"""Settings through initializationOptions and workspace/configuration decide what is a workflow."""

from __future__ import annotations

import json
import sys

import pytest
from lsp_harness import (
    CLIENTS,
    Session,
    answer_registrations,
    initialize_params,
    record_publications,
)
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = pytest.mark.asyncio

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
