"""The code lens on each step saying how many recorded histories pass through it, from the real
language server process over a run store a real MCP server recorded a session and a run in."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from lsp_harness import Session, answer_registrations, initialize_params, record_publications
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from tests.cli.test_replay_cli import record

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.slow]


async def lenses_of(
    home: Path, root: Path, documents: dict[str, str]
) -> dict[str, list[tuple[int, str]]]:
    """The lenses of each document (name: text) in one language server over the store in
    ``home``, each document closed before the next is opened: (line, title) by name."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "workrail_lsp"],
        server_env={**os.environ, "WORKRAIL_HOME": str(home)},
    )
    client = await config.start()
    published = record_publications(client)
    answer_registrations(client)
    lenses: dict[str, list[tuple[int, str]]] = {}
    try:
        await client.initialize_session(initialize_params("vscode", root))
        session = Session(client, "vscode", root, published)
        for name, text in documents.items():
            uri = session.open(name, text)
            found = await client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            session.close(uri)
            lenses[name] = [(lens.range.start.line, lens.command.title) for lens in found]
        return lenses
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_each_step_shows_how_many_recorded_histories_pass_through_it(tmp_path):
    root = record(tmp_path / "recorded")
    path = root / "project" / "workflows" / "replay-flow.json"
    text = path.read_text()
    lines = text.splitlines()
    other = json.loads(text) | {"id": "never-recorded"}
    recorded_name, other_name = "workflows/replay-flow.json", "workflows/other.json"
    lenses = await lenses_of(
        root / "home",
        root / "project",
        {recorded_name: text, other_name: json.dumps(other, indent=2)},
    )
    shown = dict(lenses[recorded_name])

    def line_of_id(step_id: str) -> int:
        return next(n for n, line in enumerate(lines) if f'"id": "{step_id}"' in line)

    # one session and one run took every step but the loop itself (its body step did)
    for step_id in ("plan", "work", "gate", "ship"):
        assert shown[line_of_id(step_id)] == "2 recorded histories pass here", shown
    assert line_of_id("rounds") not in shown
    quiet = lenses[other_name]
    assert sorted(title for _, title in quiet) == ["Preview steps", "Validate workspace"]
