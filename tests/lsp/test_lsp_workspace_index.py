"""The workspace scan never holds up a document's own diagnostics.

A workflow opened in a large root got its first diagnostics only after the server had walked the
root and read every JSON and YAML file in it for duplicate ids. Now the document's diagnostics
come first, from what the index knows; the scan runs on its own thread, and what it finds follows:
pushed again, or, for a pull client that supports it, a ``workspace/diagnostic/refresh``.
"""

from __future__ import annotations

import asyncio
import json
import queue
import time
from pathlib import Path
from typing import Any

from raw_lsp import RawLspServer

from workrail_lsp import workspace_index
from workrail_lsp.configuration import Settings
from workrail_lsp.workspace_index import WorkspaceIndex

SHARED = {"id": "shared-id", "name": "A", "steps": [{"id": "one", "title": "t", "prompt": "p"}]}


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "first.json").write_text(json.dumps(SHARED, indent=2))
    return root


def _next_frame(server: RawLspServer, wanted: Any, timeout: float = 20) -> dict[str, Any]:
    """The next message the server writes for which ``wanted(message)`` holds; the server's own
    requests are recorded in ``server.seen`` and answered null."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            message = server.frames.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"nothing wanted within {timeout} s") from None
        assert message is not None, server.stderr_text()[-2000:]
        if "method" in message and "id" in message:
            server.send({"id": message["id"], "result": None})
        if wanted(message):
            return message


def _codes(items: list[dict[str, Any]]) -> list[str]:
    return [item["code"] for item in items]


def test_push_the_documents_own_diagnostics_first_then_the_duplicate_id(tmp_path):
    root = _root(tmp_path)
    server = RawLspServer(root)
    try:
        server.initialize()  # no pull capability: diagnostics are pushed
        uri = server.open(root / "workflows" / "second.json", json.dumps(SHARED | {"name": "B"}))

        def published(message: dict[str, Any]) -> bool:
            params = message.get("params") or {}
            return (
                message.get("method") == "textDocument/publishDiagnostics"
                and params.get("uri") == uri
            )

        first = _next_frame(server, published)
        assert "WR603" not in _codes(first["params"]["diagnostics"])
        # The document's own diagnostics may come twice (sent before pygls loads, then by the
        # server: first_diagnostics.py); then again with the duplicate id, once the scan found it.
        for _ in range(2):
            again = _next_frame(server, published)
            if again["params"]["diagnostics"] != first["params"]["diagnostics"]:
                break
        assert "WR603" in _codes(again["params"]["diagnostics"]), again
    finally:
        assert server.close() == 0


def test_pull_answers_at_once_then_asks_the_client_to_pull_again(tmp_path):
    root = _root(tmp_path)
    server = RawLspServer(root)
    try:
        server.initialize(
            {
                "textDocument": {"diagnostic": {}},
                "workspace": {"diagnostics": {"refreshSupport": True}},
            }
        )
        uri = server.open(root / "workflows" / "second.json", json.dumps(SHARED | {"name": "B"}))
        request = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        first = _next_frame(server, lambda m: m.get("id") == request)
        assert "WR603" not in _codes(first["result"]["items"])
        # The first answer may come before pygls loads (first_diagnostics.py): the server's own
        # handling of the open then asks for a pull too, before the scan's finding does.
        for _ in range(2):
            _next_frame(server, lambda m: m.get("method") == "workspace/diagnostic/refresh")
            again = server.call("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            if "WR603" in _codes(again["result"]["items"]):
                break
        assert "WR603" in _codes(again["result"]["items"]), again
    finally:
        assert server.close() == 0


# -- the scan's bounds, on the index itself ------------------------------------------------------


def test_a_scan_stops_at_its_time_bound(tmp_path, monkeypatch):
    root = _root(tmp_path)
    index = WorkspaceIndex()
    index.configure([root], Settings())
    monkeypatch.setattr(workspace_index, "MAX_SCAN_SECONDS", 0.0)
    assert index.ids() == {}  # no loop: the scan ran here, and stopped before the first file
    monkeypatch.setattr(workspace_index, "MAX_SCAN_SECONDS", 10.0)
    index.files_changed()
    assert index.ids() == {str(root / "workflows" / "first.json"): "shared-id"}


def test_a_scan_stops_at_its_file_bound(tmp_path, monkeypatch):
    root = _root(tmp_path)
    for n in range(5):
        (root / f"other-{n}.json").write_text("{}")
    monkeypatch.setattr(workspace_index, "MAX_SCAN_FILES", 3)
    files = workspace_index.candidate_files([root], Settings())
    assert len(files) == 3


def test_a_scan_a_bound_stopped_knows_no_id_missing(tmp_path, monkeypatch):
    """WR703/WR709 say an id is missing from the workspace and the catalog: from a scan cut by
    its time bound (a loaded machine) they named bundled workflows it had not reached yet."""
    root = _root(tmp_path)
    index = WorkspaceIndex()
    index.configure([root], Settings())
    monkeypatch.setattr(workspace_index, "MAX_SCAN_SECONDS", 0.0)
    index.ids()  # no loop: the scan runs here, and stops before the first file
    assert index.known_ids() is None
    monkeypatch.setattr(workspace_index, "MAX_SCAN_SECONDS", 10.0)
    index.files_changed()
    index.ids()  # a scan that reads everything
    assert "shared-id" in (index.known_ids() or set())


def test_a_scan_cut_at_its_file_bound_knows_no_id_missing(tmp_path, monkeypatch):
    root = _root(tmp_path)
    for n in range(5):
        (root / f"other-{n}.json").write_text("{}")
    index = WorkspaceIndex()
    index.configure([root], Settings())
    monkeypatch.setattr(workspace_index, "MAX_SCAN_FILES", 3)
    index.ids()
    assert index.known_ids() is None
    monkeypatch.setattr(workspace_index, "MAX_SCAN_FILES", 5000)
    index.files_changed()
    index.ids()
    assert "shared-id" in (index.known_ids() or set())


def test_a_new_configuration_cancels_the_running_scan(tmp_path):
    old_root, new_root = _root(tmp_path / "old"), tmp_path / "new"
    new_root.mkdir()
    changes = []

    async def scenario() -> dict[str, str | None]:
        index = WorkspaceIndex()
        index.on_change = lambda: changes.append(index.generation)
        index.configure([old_root], Settings())
        index.refresh()  # starts on its thread shortly
        assert index.scanning()
        index.configure([new_root], Settings())  # before it ends: what it finds is dropped
        index.refresh()
        while index.scanning():
            await asyncio.sleep(0.01)
        return index.ids()

    assert asyncio.run(scenario()) == {}
    # One change: the new root's scan ended, and with it the catalog's ids (the bundled
    # workflows) became known for WR703/WR709; the old root's findings never counted.
    assert changes == [1]


def test_a_configuration_naming_other_folders_is_scanned_again_at_once(tmp_path):
    """A client that watches no files (Neovim) tells nobody the project configuration changed;
    the next look-up sees its workflow folders differ from the last scan's and scans again,
    without waiting for the time between scans (a scan of a large root sets that to seconds)."""
    root = _root(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "other.json").write_text(json.dumps({**SHARED, "id": "outside-id"}, indent=2))
    index = WorkspaceIndex()
    index.configure([root], Settings(project_roots=(str(root),)))
    first = str(root / "workflows" / "first.json")
    assert index.ids() == {first: "shared-id"}  # no loop: the scan ran here
    (root / ".workrail").mkdir()
    (root / ".workrail" / "config.toml").write_text('workflow-dirs = ["../outside"]\n')
    assert index.ids() == {first: "shared-id", str(outside / "other.json"): "outside-id"}
