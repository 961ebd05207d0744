"""The fast start's contract (workrail_lsp/fast_start/): it changes nothing but the time.

The real server is started twice over stdio, with the fast start and without it (pygls answering
everything from the first byte), and driven by the same client exchange as an editor sends it
(``initialize``, then ``initialized`` and ``didOpen`` back to back). Both must give the same
``initialize`` result, ask the client the same settings, send the same first diagnostics for the
same first document, and behave the same after a settings change (both stop taking the document
for a workflow, and give the same diagnostics for it then). The fast-start run must have
served the early answers itself (its log says so), or the comparison would prove nothing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import SERVER, WITHOUT_FAST_START, RawLspServer

from workrail_lsp.configuration import IS_WORKFLOW
from workrail_lsp.fast_start.first_diagnostics import SETTINGS_REQUEST
from workrail_lsp.fast_start.handshake import RECORD_COMMAND

REPO = Path(__file__).resolve().parents[3]
CAPTURES = REPO / "tests" / "fixtures" / "lsp" / "initialize"
FAST, ALONE = "fast start", "pygls alone"
STARTS = {
    FAST: [*SERVER, "--log-level", "INFO"],
    ALONE: [*WITHOUT_FAST_START, "--log-level", "INFO"],
}
EARLY = "before loading pygls"  # in the fast start's INFO log lines, and only there
# Only these settings make the documents below workflows (none names WorkRail's $schema); the
# change takes that away, so it shows in the diagnostics and in isWorkflow.
SETTINGS_BEFORE = {"workflowGlobs": ["**/*.flow.json", "**/*.flow.yaml"]}
SETTINGS_AFTER = {"workflowGlobs": ["**/*.other.json"]}
# The server's requests whose sending does not depend on when the workspace scan ends (a
# workspace/diagnostic/refresh does).
COMPARED_REQUESTS = ("workspace/configuration", "client/registerCapability")


def _valid_workflow() -> str:
    value = json.loads((REPO / "workflows" / "coding-task.json").read_text(encoding="utf-8"))
    del value["$schema"]
    return json.dumps(value, indent=2, ensure_ascii=False)


# Errors after characters that UTF-8, UTF-16 and UTF-32 count differently, and a duplicate id
# (a diagnostic with related information).
_STEPS_WITH_ERRORS = [
    {"id": "a", "title": "A", "prompt": "p"},
    {"id": "a", "title": "B 😀", "prompt": "q"},
    {"id": "b", "title": "C"},
]
_WITH_ERRORS = {"id": "flow", "name": "Flöw 😀", "description": "d", "version": "1.0.0"}
DOCUMENTS = {
    "valid JSON": ("task.flow.json", "json", _valid_workflow()),
    "JSON with errors": (
        "task.flow.json",
        "json",
        json.dumps({**_WITH_ERRORS, "steps": _STEPS_WITH_ERRORS}, ensure_ascii=False),
    ),
    "YAML with errors": (
        "task.flow.yaml",
        "yaml",
        "id: flow\nname: Flöw 😀\ndescription: d\nversion: 1.0.0\nsteps:\n"
        "  - {id: a, title: A 😀, prompt: p}\n  - id: a\n    title: B\n",
    ),
}


def _captured(name: str) -> dict[str, Any]:
    """A real editor's initialize params (tests/fixtures/lsp/initialize/), but its workspace."""
    params: dict[str, Any] = json.loads((CAPTURES / f"{name}.json").read_text())["params"]
    for ours in ("processId", "rootUri", "rootPath", "workspaceFolders"):
        params.pop(ours, None)
    return params


PUSH_ASKING = "push client that serves settings"
CLIENTS: dict[str, dict[str, Any]] = {
    PUSH_ASKING: {
        "capabilities": {
            "workspace": {
                "configuration": True,
                "didChangeWatchedFiles": {"dynamicRegistration": True},
            }
        }
    },
    # settings in initializationOptions, then in workspace/didChangeConfiguration
    "push client that sends settings": {
        "capabilities": {},
        "initializationOptions": {"workrail": SETTINGS_BEFORE},
    },
    "VS Code 1.139.1 (pull)": _captured("code-server-4.139.1"),
    "Neovim 0.11.4 (pull, UTF-8)": _captured("neovim-0.11.4"),
}
CASES = [
    *((PUSH_ASKING, document) for document in DOCUMENTS),
    *((client, "JSON with errors") for client in CLIENTS if client != PUSH_ASKING),
]


@dataclass
class Exchange:
    """What a client saw of one server, and what that server logged."""

    initialize: dict[str, Any]
    first_diagnostics: list[dict[str, Any]]
    diagnostics_after_change: list[dict[str, Any]]
    requests: list[tuple[Any, str, Any]]  # the server's (id, method, params), COMPARED_REQUESTS
    stderr: str


def _first_publish(uri: str) -> Any:
    def found(seen: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        for message in seen:
            if message.get("method") == "textDocument/publishDiagnostics":
                if message["params"]["uri"] == uri:
                    return list(message["params"]["diagnostics"])
        return None

    return found


def _asked(method: str, count: int) -> Any:
    """Once the server has sent ``count`` requests ``method`` (the fast start's own aside)."""

    def found(seen: list[dict[str, Any]]) -> bool | None:
        asked = [m for m in seen if m.get("method") == method and m.get("id") != SETTINGS_REQUEST]
        return True if len(asked) >= count else None

    return found


def _until_not_a_workflow(server: RawLspServer, uri: str, text: str) -> None:
    """Ask isWorkflow until the settings change has been applied: pygls runs the change's
    handler as a task of its own, which a request right after it may overtake (pull or not, fast
    start or not)."""
    command = {"command": IS_WORKFLOW, "arguments": [uri, text]}
    deadline = time.monotonic() + 30
    while server.call("workspace/executeCommand", command)["result"] is not False:
        assert time.monotonic() < deadline, "the settings change was never applied"


def _exchange(folder: Path, start: str, client: dict[str, Any], document: str) -> Exchange:
    root = folder / "ws"  # the same for both starts (one after the other): the same URIs
    root.mkdir(exist_ok=True)
    name, language, text = DOCUMENTS[document]
    path = root / name
    path.write_text(text, encoding="utf-8")
    settings = {"now": SETTINGS_BEFORE}
    server = RawLspServer(
        root,
        command=STARTS[start],
        replies={
            "workspace/configuration": lambda params: [settings["now"]] * len(params["items"])
        },
    )
    capabilities = client["capabilities"]
    pull = "diagnostic" in capabilities.get("textDocument", {})
    asks_settings = bool(capabilities.get("workspace", {}).get("configuration"))
    watched = capabilities.get("workspace", {}).get("didChangeWatchedFiles", {})
    pull_params = {"textDocument": {"uri": path.as_uri()}}
    try:
        initialize = server.initialize(**client)
        uri = server.open(path, text, language)
        if pull:
            first = server.call("textDocument/diagnostic", pull_params, timeout=60)["result"]
            first_diagnostics = first["items"]
        else:
            first_diagnostics = server.wait_for(_first_publish(uri))
        settings["now"] = SETTINGS_AFTER
        server.notify(
            "workspace/didChangeConfiguration", {"settings": {"workrail": SETTINGS_AFTER}}
        )
        if asks_settings:  # after ``initialized``, and after the change: answered as they come
            server.wait_for(_asked("workspace/configuration", 2))
        if watched.get("dynamicRegistration"):  # the project configuration's files
            server.wait_for(_asked("client/registerCapability", 1))
        _until_not_a_workflow(server, uri, text)
        # A push client may pull too; its answer is the report a push would carry.
        after = server.call("textDocument/diagnostic", pull_params, timeout=60)["result"]
    finally:
        code = server.close()
    assert code == 0, server.stderr_text()[-2000:]
    requests = [
        (m["id"], m["method"], m["params"])
        for m in server.seen
        if m.get("method") in COMPARED_REQUESTS and "id" in m
    ]
    return Exchange(
        initialize,
        first_diagnostics,
        after["items"],
        requests,
        server.stderr_text(),
    )


@pytest.mark.parametrize(("client", "document"), CASES)
def test_the_fast_start_gives_what_pygls_alone_gives(tmp_path, client, document):
    fast = _exchange(tmp_path, FAST, CLIENTS[client], document)
    alone = _exchange(tmp_path, ALONE, CLIENTS[client], document)
    name = DOCUMENTS[document][0]
    # The fast start did answer early (else this compares pygls with itself), pygls alone did not.
    assert "answered initialize before loading pygls" in fast.stderr
    assert any(EARLY in line and name in line for line in fast.stderr.splitlines()), fast.stderr
    assert EARLY not in alone.stderr

    assert fast.initialize == alone.initialize, (
        f"the fast start's initialize answer is not pygls's: run `{RECORD_COMMAND}` "
        "(workrail_lsp/fast_start/initialize_result.json)"
    )
    assert fast.first_diagnostics == alone.first_diagnostics, (
        "the early diagnostics differ from the server's: workrail_lsp/fast_start/"
        "first_diagnostics.py (document_diagnostics, the settings it reads) must give what "
        "diagnostics.py and configuration.py give"
    )
    assert fast.diagnostics_after_change == alone.diagnostics_after_change
    # The fast start asks for the settings once more, before pygls loads, as pygls asks them.
    early = [(m, p) for i, m, p in fast.requests if i == SETTINGS_REQUEST]
    fast_rest = [(m, p) for i, m, p in fast.requests if i != SETTINGS_REQUEST]
    asked = [(m, p) for _, m, p in alone.requests]
    assert sorted(map(json.dumps, fast_rest)) == sorted(map(json.dumps, asked))
    if CLIENTS[client]["capabilities"].get("workspace", {}).get("configuration"):
        assert early == [asked[0]] and asked[0][0] == "workspace/configuration", (
            "the fast start asks for settings unlike the server: workrail_lsp/fast_start/"
            "first_diagnostics.py must ask as server.py's _fetch_configuration does"
        )
    else:
        assert early == [] and not [m for m, _ in asked if m == "workspace/configuration"]

    # What is compared says something: the settings decided both answers.
    errors = [d for d in alone.first_diagnostics if d["severity"] == 1]
    assert bool(errors) == (document != "valid JSON"), alone.first_diagnostics
    assert alone.diagnostics_after_change == []
