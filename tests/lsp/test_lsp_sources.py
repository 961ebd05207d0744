"""A workflow repository's workflows in the real language server: a routine template and a
delegation naming them validate clean (one naming nothing still gets WR703/WR709), and
go-to-definition on them opens the repository's file in the cache, which is read-only; a push to
the followed branch reaches the server by its background refresh."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from raw_lsp import RawLspServer

from tests.git_remotes import CALLER, project_using, team_remote, workflow
from workrail_engine.sources.refresh import SYNC_INTERVAL_VARIABLE
from workrail_engine.text.document import LineIndex


def _position(text: str, needle: str) -> dict[str, int]:
    line, column = LineIndex(text).position(text.index(needle) + 1, "utf-16")
    return {"line": line, "character": column}


def _published(uri: str, wanted: Any) -> Any:
    def found(seen: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        for message in reversed(seen):
            params = message.get("params") or {}
            if (
                message.get("method") == "textDocument/publishDiagnostics"
                and params.get("uri") == uri
            ):
                return params["diagnostics"] if wanted(params["diagnostics"]) else None
        return None

    return found


def test_references_into_a_repository_validate_and_go_to_its_read_only_file(tmp_path):
    remote = team_remote(tmp_path)
    project = project_using(remote, tmp_path / "project")
    path = project / "workflows" / "caller.json"
    path.parent.mkdir()
    text = json.dumps(CALLER, indent=2)
    path.write_text(text)
    server = RawLspServer(project)
    try:
        server.initialize()  # push diagnostics
        uri = server.open(path, text)
        # WR703/WR709 appear once the scan has read every workflow file the references may name:
        # then the ones naming the repository's workflows must not be among them.
        diagnostics = server.wait_for(
            _published(uri, lambda items: {"WR703", "WR709"} <= {d["code"] for d in items}),
            timeout=30,
        )
        flagged = sorted(
            (d["code"], d["data"]["pointer"])
            for d in diagnostics
            if d["code"] in ("WR703", "WR709")
        )
        assert flagged == [
            ("WR703", "/steps/1/templateCall/templateId"),
            ("WR709", "/steps/2/parallelDelegations/1/workflowId"),
        ]
        home = Path(os.environ["WORKRAIL_HOME"]).resolve()
        for needle, target_id in (
            ('"wr.templates.routine.team-check"', "routine-team-check"),
            ('"team-review"', "team-review"),
        ):
            answer = server.call(
                "textDocument/definition",
                {"textDocument": {"uri": uri}, "position": _position(text, needle)},
            )
            (location,) = answer["result"]
            target = Path(location["uri"].removeprefix("file://"))
            assert target.is_relative_to(home / "sources"), target  # the cached tree's file
            assert target.stat().st_mode & 0o222 == 0  # read-only: the editor opens it so
            target_text = target.read_text()
            start = location["range"]["start"]
            line = target_text.splitlines()[start["line"]]
            assert line[start["character"] :].startswith(f'"{target_id}"')
        nothing = server.call(
            "textDocument/definition",
            {"textDocument": {"uri": uri}, "position": _position(text, '"nobody-has-this"')},
        )
        assert nothing["result"] is None
    finally:
        assert server.close() == 0


def test_a_routine_pushed_to_the_followed_branch_is_known_without_a_restart(tmp_path, monkeypatch):
    monkeypatch.setenv(SYNC_INTERVAL_VARIABLE, "1")  # the server's environment: os.environ
    remote = team_remote(tmp_path)
    project = project_using(remote, tmp_path / "project")
    path = project / "workflows" / "late.json"
    path.parent.mkdir()
    late = {
        **CALLER,
        "id": "late",
        "steps": [
            CALLER["steps"][0] | {"templateCall": {"templateId": "wr.templates.routine.team-late"}}
        ],
    }
    text = json.dumps(late, indent=2)
    path.write_text(text)
    server = RawLspServer(project)
    try:
        server.initialize()
        uri = server.open(path, text)
        server.wait_for(_published(uri, lambda items: "WR703" in {d["code"] for d in items}))
        remote.write("flows/routines/late.json", workflow("routine-team-late"))
        remote.commit("a routine")
        server.wait_for(
            _published(uri, lambda items: "WR703" not in {d["code"] for d in items}), timeout=30
        )
    finally:
        assert server.close() == 0
