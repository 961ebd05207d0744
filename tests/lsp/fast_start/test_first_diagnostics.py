"""The first opened workflow's diagnostics are sent before pygls is loaded
(``workrail_lsp/fast_start/first_diagnostics.py``), and they are the server's own: the real server process
over stdio, its stderr under ``-X importtime`` telling when pygls was imported."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from raw_lsp import RawLspServer

from workrail_lsp.configuration import SECTION
from workrail_lsp.fast_start.first_diagnostics import SETTINGS_REQUEST

REPO = Path(__file__).resolve().parents[3]
EARLY = "before loading pygls"  # the server's INFO log line when it published or answered early
COMMAND = [sys.executable, "-X", "importtime", "-m", "workrail_lsp", "--log-level", "INFO"]


def _broken_workflow() -> str:
    """A workflow with errors on one line after a character UTF-16 counts as two units, and a
    diagnostic with related information (a duplicate step id)."""
    value = json.loads((REPO / "workflows" / "coding-task.json").read_text())
    value["steps"][0]["title"] = "Analyse 😀 " + value["steps"][0]["title"]
    value["steps"][1]["id"] = value["steps"][0]["id"]
    value["steps"].append({"id": "x", "title": "t", "prompt": "p"})
    return json.dumps(value, ensure_ascii=False)


def _server(tmp_path: Path, settings: dict[str, Any] | None = None) -> tuple[RawLspServer, Path]:
    """``settings``: the client's answer to each workspace/configuration request."""
    root = tmp_path / "ws"
    (root / "workflows").mkdir(parents=True)
    path = root / "workflows" / "coding-task.json"
    path.write_text(_broken_workflow(), encoding="utf-8")
    replies = {"workspace/configuration": lambda params: [settings]} if settings else None
    return RawLspServer(root, command=COMMAND, replies=replies), path


def _publishes(server: RawLspServer, uri: str, count: int) -> list[dict[str, Any]]:
    def found(seen: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        published = [
            m["params"]
            for m in seen
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        ]
        return published if len(published) >= count else None

    return server.wait_for(found)


def _imported_before_the_early_answer(server: RawLspServer) -> list[str]:
    lines = server.stderr_text().splitlines()
    early = next(i for i, line in enumerate(lines) if EARLY in line and "diagnostics" in line)
    return [line.rsplit("|", 1)[1].strip() for line in lines[:early] if "|" in line]


def _no_pygls(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in ("pygls", "lsprotocol", "cattrs", "asyncio")]


def test_a_push_client_gets_the_servers_own_diagnostics_before_pygls_loads(tmp_path):
    server, path = _server(tmp_path)
    try:
        server.initialize({"general": {"positionEncodings": ["utf-16"]}})
        uri = server.open(path, path.read_text(encoding="utf-8"))
        early, again = _publishes(server, uri, 2)
        modules = _imported_before_the_early_answer(server)
        assert "workrail_engine.lint" in modules and _no_pygls(modules) == []
        # pygls's handling of the same didOpen publishes what the server computes: the same
        assert early == again
        codes = {d["code"] for d in early["diagnostics"]}
        assert {"WR201", "WR106"} <= codes, codes
        assert any(d.get("relatedInformation") for d in early["diagnostics"])
        # after the early phase every byte still reaches pygls: a whole new text (> 64 KiB, more
        # than one read of the client's stream) is judged as version 2
        big = json.loads(path.read_text(encoding="utf-8"))
        big["description"] = "d" * 100_000
        big["steps"].pop()  # the short id is gone
        server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": json.dumps(big, ensure_ascii=False)}],
            },
        )
        latest = _publishes(server, uri, 3)[-1]
        assert latest["version"] == 2
        assert "WR106" not in {d["code"] for d in latest["diagnostics"]}
    finally:
        assert server.close() == 0


def test_a_pull_client_gets_one_answer_equal_to_the_servers_own(tmp_path):
    server, path = _server(tmp_path)
    try:
        server.initialize({"textDocument": {"diagnostic": {}}})
        uri = server.open(path, path.read_text(encoding="utf-8"))
        params = {"textDocument": {"uri": uri}}
        first = server.call("textDocument/diagnostic", params, timeout=60)["result"]
        modules = _imported_before_the_early_answer(server)
        assert _no_pygls(modules) == []
        # pygls serves the next pull (its result id is its own, so the report is full); it is
        # answered once pygls has loaded, which took more than 10 s at a load of 15 on 2 cores
        second = server.call(
            "textDocument/diagnostic", {**params, "previousResultId": first["resultId"]}, timeout=60
        )["result"]
        assert second["kind"] == "full" and second["items"] == first["items"]
        assert first["items"] and first["resultId"] != second["resultId"]
        answers = [m for m in server.seen if "method" not in m and m.get("id") is not None]
        ids = [m["id"] for m in answers]
        assert len(ids) == len(set(ids)), ids  # the early answer is not answered again by pygls
        assert not [m for m in server.seen if "publishDiagnostics" in str(m.get("method"))]
    finally:
        assert server.close() == 0


def test_a_client_that_serves_settings_is_asked_for_them_first(tmp_path):
    """A client with ``workspace/configuration``: the document is judged by the client's settings
    (here the only ones that make it a workflow), early and by the server alike."""
    server, path = _server(tmp_path, settings={"workflowGlobs": ["**/*.flow.json"]})
    try:
        other = server.root / "task.flow.json"
        value = json.loads(path.read_text(encoding="utf-8"))
        del value["$schema"]  # which makes any file a workflow
        other.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        server.initialize({"workspace": {"configuration": True}})
        uri = server.open(other, other.read_text(encoding="utf-8"))
        early, again = _publishes(server, uri, 2)
        asked = [m for m in server.seen if m.get("method") == "workspace/configuration"]
        assert [m["id"] for m in asked][:1] == [SETTINGS_REQUEST] and len(asked) == 2
        assert all(m["params"]["items"] == [{"section": SECTION}] for m in asked)
        assert _no_pygls(_imported_before_the_early_answer(server)) == []
        assert early == again and {"WR201", "WR106"} <= {d["code"] for d in early["diagnostics"]}
    finally:
        assert server.close() == 0


def test_settings_sent_with_did_change_configuration_are_read_first(tmp_path):
    """Neovim and VS Code send ``workspace/didChangeConfiguration`` right after ``initialized``:
    its settings (the only ones here that make the file a workflow) judge the early diagnostics."""
    server, path = _server(tmp_path)
    try:
        server.initialize()
        server.notify(
            "workspace/didChangeConfiguration",
            {"settings": {"workrail": {"workflowGlobs": ["**/*.flow.json"]}}},
        )
        other = server.root / "task.flow.json"
        value = json.loads(path.read_text(encoding="utf-8"))
        del value["$schema"]
        other.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        uri = server.open(other, other.read_text(encoding="utf-8"))
        early, again = _publishes(server, uri, 2)
        assert _no_pygls(_imported_before_the_early_answer(server)) == []
        assert early == again and "WR106" in {d["code"] for d in early["diagnostics"]}
    finally:
        assert server.close() == 0


def test_a_document_that_is_not_a_workflow_is_left_to_the_server(tmp_path):
    server, _ = _server(tmp_path)
    try:
        server.initialize()
        other = server.root / "package.json"
        other.write_text('{"name": "x"}')
        uri = server.open(other, other.read_text())
        (published,) = _publishes(server, uri, 1)
        assert published["diagnostics"] == []
        assert EARLY not in "\n".join(
            line for line in server.stderr_text().splitlines() if "diagnostics" in line
        )
    finally:
        assert server.close() == 0
