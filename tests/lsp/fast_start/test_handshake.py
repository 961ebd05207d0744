"""``initialize`` answered before pygls is loaded: the same answer pygls gives, then a server that
works as if pygls had read the request itself (workrail_lsp/fast_start/handshake.py)."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawLspServer, frame

from workrail_lsp.fast_start import handshake
from workrail_lsp.fast_start.handshake import (
    CLIENT_SWITCHES,
    RECORD_COMMAND,
    TEMPLATE,
    AnsweredOnce,
    Replay,
    answer_initialize,
    client_with,
    initialize_result,
    pygls_answer,
    read_first_message,
    record_template,
    template_text,
)

# Client capabilities captured from real editors: pytest-lsp's collection, and ours (the
# initialize requests Neovim and VS Code sent to workrail-lsp, tests/fixtures/lsp/initialize/).
PYTEST_LSP_CLIENTS = Path(__import__("pytest_lsp").__file__).parent / "clients"
OUR_CAPTURES = Path(__file__).parents[2] / "fixtures" / "lsp" / "initialize"
CAPTURED = {
    **{p.stem: json.loads(p.read_text()) for p in sorted(PYTEST_LSP_CLIENTS.glob("*.json"))},
    **{p.stem: json.loads(p.read_text())["params"] for p in sorted(OUR_CAPTURES.glob("*.json"))},
}
ENCODINGS = [["utf-32", "utf-8"], ["utf-8", "utf-16"], ["latin-1", "utf-32"], ["latin-1"], []]


def _initialize(capabilities: dict[str, Any], request_id: int | str = 1) -> dict[str, Any]:
    params = {"processId": None, "rootUri": None, "capabilities": capabilities}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def test_the_recorded_template_is_what_pygls_builds_for_this_server():
    """The server's capabilities are declared once, by ``server.py``'s feature registrations;
    the fast start's answer is recorded from them."""
    assert TEMPLATE.read_text(encoding="utf-8") == template_text(record_template()), (
        f"{TEMPLATE.relative_to(Path(handshake.__file__).parents[2])} differs from what pygls "
        f"builds from workrail_lsp/server.py's feature registrations: run `{RECORD_COMMAND}`"
    )


@pytest.mark.parametrize("client", sorted(CAPTURED))
def test_the_early_answer_equals_pygls_answer_for_real_clients(client):
    assert len(CAPTURED) >= 10  # pytest-lsp's eight and our two
    capabilities = CAPTURED[client]["capabilities"]
    template = json.loads(TEMPLATE.read_text())
    assert initialize_result({"capabilities": capabilities}, template) == pygls_answer(capabilities)


@pytest.mark.parametrize("encodings", ENCODINGS)
def test_the_position_encoding_is_chosen_as_pygls_chooses_it(encodings):
    capabilities = {"general": {"positionEncodings": encodings}}
    template = json.loads(TEMPLATE.read_text())
    ours = initialize_result({"capabilities": capabilities}, template)
    assert ours == pygls_answer(capabilities)
    assert ours["capabilities"]["positionEncoding"] == next(
        (e for e in encodings if e in ("utf-8", "utf-16", "utf-32")), "utf-16"
    )


@pytest.mark.parametrize("state", ["true", "false"])
def test_every_client_switch_at_once_equals_pygls(state):
    switches = [s for s in CLIENT_SWITCHES if not (s == "notebookDocument" and state == "false")]
    every = client_with(dict.fromkeys(switches, state))
    template = json.loads(TEMPLATE.read_text())
    assert initialize_result({"capabilities": every}, template) == pygls_answer(every)


# -- the wrappers pygls is given ------------------------------------------------------------


def test_replay_gives_the_consumed_bytes_then_the_stream():
    replay = Replay(b"Content-Length: 2\r\n\r\n{}Con", io.BytesIO(b"tent-Length: 3\r\n\r\n[1]"))
    assert replay.readline() == b"Content-Length: 2\r\n"
    assert replay.readline() == b"\r\n"
    assert replay.read(2) == b"{}"
    assert replay.readline() == b"Content-Length: 3\r\n"  # half consumed, half still in the pipe
    assert replay.readline() == b"\r\n"
    assert replay.read(3) == b"[1]"
    assert replay.readline() == b""


def test_answered_once_drops_only_pyglss_answer_to_the_answered_request(caplog):
    out = io.BytesIO()
    sent = {"capabilities": {"hoverProvider": True}}
    writer = AnsweredOnce(out, 7, sent)
    notice = frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}})
    writer.write(notice)
    writer.write(frame({"jsonrpc": "2.0", "id": 7, "result": sent}))
    later = frame({"jsonrpc": "2.0", "id": 7, "result": None})  # a later id 7 is not dropped
    writer.write(later)
    assert out.getvalue() == notice + later
    assert not writer.waiting and caplog.records == []


def test_a_different_answer_from_pygls_is_logged(caplog):
    writer = AnsweredOnce(io.BytesIO(), "init", {"capabilities": {"hoverProvider": True}})
    with caplog.at_level(logging.WARNING, logger=handshake.__name__):
        writer.write(frame({"jsonrpc": "2.0", "id": "init", "result": {"capabilities": {}}}))
    assert "hoverProvider: sent true, pygls null" in caplog.text
    assert RECORD_COMMAND in caplog.text


@pytest.mark.parametrize(
    "stream",
    [
        b"",  # end of input
        b"Content-Length: 5\r\n",  # ends inside the headers
        b"Content-Length: x\r\n\r\n{}",
        b"Content-Length: %d\r\n\r\n" % (handshake.MAX_EARLY_MESSAGE + 1),
        b"Content-Length: 3\r\n\r\nnot",
    ],
)
def test_a_first_message_that_cannot_be_read_is_left_whole_to_pygls(stream):
    stdin, stdout = io.BytesIO(stream), io.BytesIO()
    replay, writer = answer_initialize(stdin, stdout)
    assert stdout.getvalue() == b"" and writer is stdout
    assert replay.read(len(stream)) == stream


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "initialize", "params": {"capabilities": {}}},  # no id
        {**_initialize({}), "id": True},
        {**_initialize({}), "params": {"processId": "abc", "capabilities": {}}},
        {**_initialize({}), "params": {"processId": None}},
        {**_initialize({}), "params": {"capabilities": {}, "trace": "loud"}},
        {**_initialize({}), "params": {"capabilities": {}, "workspaceFolders": "here"}},
    ],
)
def test_anything_but_a_well_formed_initialize_is_left_to_pygls(message):
    stream = frame(message)
    stdout = io.BytesIO()
    replay, writer = answer_initialize(io.BytesIO(stream), stdout)
    assert stdout.getvalue() == b"" and writer is stdout
    assert read_first_message(replay).raw == stream


# -- the real process ---------------------------------------------------------------------------


def _server_output(stdin: bytes, *args: str) -> tuple[bytes, str, int]:
    run = subprocess.run(
        [sys.executable, *args, "-m", "workrail_lsp", "--log-level", "INFO"],
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    return run.stdout, run.stderr.decode(errors="replace"), run.returncode


def _messages(stdout: bytes) -> list[dict[str, Any]]:
    messages, rest = [], stdout
    while rest:
        header, _, rest = rest.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        messages.append(json.loads(rest[:length]))
        rest = rest[length:]
    return messages


def test_a_session_after_the_early_answer_is_served_as_before(tmp_path):
    """One answer per request (pygls's own answer to initialize is not sent a second time), and
    pygls knows what the client said: the position encoding it chose and the workspace root."""
    root = tmp_path / "ws"
    (root / "workflows").mkdir(parents=True)
    server = RawLspServer(root)
    try:
        capabilities = CAPTURED["neovim_v0.11.0"]["capabilities"]
        server.initialize({**capabilities, "general": {"positionEncodings": ["utf-8"]}})
        text = '{"id": "flow", "name": "Flöw", "steps": [{"id": "a", "title": "Ä", "prompt": 1}]}'
        uri = server.open(root / "workflows" / "flow.json", text)
        hover = server.call(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 71}},
        )
        assert "prompt" in json.dumps(hover["result"]).lower(), hover
        symbols = server.call("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
        (step,) = symbols["result"][0]["children"]
        # The step's object starts after "Flöw": byte 42 in UTF-8, code unit 41 in UTF-16.
        assert step["range"]["start"] == {"line": 0, "character": 42}, step
    finally:
        code = server.close()
    answers_to_initialize = [
        frame for frame in server.seen if frame.get("id") == server.initialize_id
    ]
    assert len(answers_to_initialize) == 1
    assert code == 0, server.stderr_text()[-2000:]
    assert "differ" not in server.stderr_text()


def test_a_first_message_that_is_not_initialize_reaches_pygls():
    shutdown = frame({"jsonrpc": "2.0", "id": 5, "method": "shutdown"})
    exit_ = frame({"jsonrpc": "2.0", "method": "exit"})
    stdout, stderr, code = _server_output(shutdown + exit_)
    assert _messages(stdout) == [{"id": 5, "jsonrpc": "2.0", "result": None}], stderr
    assert code == 0 and "answered initialize" not in stderr


def test_initialize_params_pygls_refuses_at_the_top_are_refused_once():
    bad = frame({**_initialize({}), "params": {"processId": "abc", "capabilities": {}}})
    exit_ = frame({"jsonrpc": "2.0", "method": "exit"})
    stdout, stderr, _ = _server_output(bad + exit_)
    (answer,) = _messages(stdout)
    assert answer["id"] == 1 and answer["error"]["code"] == -32602, answer
    assert "processId" in answer["error"]["message"] or "process_id" in answer["error"]["message"]


def test_initialize_params_pygls_refuses_deeper_stop_the_server_with_the_reason():
    """The early answer told the client it was initialized; pygls could not read the params, so
    nothing could be served: the server says why on stderr and exits 1."""
    bad = frame(_initialize({"general": {"positionEncodings": 5}}))
    stdout, stderr, code = _server_output(bad)
    (answer,) = _messages(stdout)
    assert answer["id"] == 1 and "result" in answer
    assert code == 1
    assert "answered, then refused by pygls" in stderr and "positionEncodings" in stderr
