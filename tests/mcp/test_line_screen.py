"""What the stdio screen does with each kind of line, before the SDK sees it."""

from __future__ import annotations

import pytest

from workrail_mcp.line_screen import screen_line


@pytest.mark.parametrize(
    "line, code, request_id",
    [
        pytest.param(b"not json", -32700, None, id="not-json"),
        pytest.param(b"\xff\xfe{}", -32700, None, id="not-utf8"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": NaN}', -32700, None, id="nan"
        ),
        pytest.param(b"[" * 5000 + b"]" * 5000, -32700, None, id="too-deep"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\\ud800"}}',
            -32602,
            1,
            id="lone-surrogate",
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": "\\udc00", "method": "ping"}',
            -32602,
            "\udc00",
            id="lone-surrogate-id",
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": 1e999}}',
            -32602,
            1,
            id="infinite-number",
        ),
        pytest.param(b"[]", -32600, None, id="empty-batch"),
        pytest.param(b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600, None, id="batch"),
        pytest.param(b"42", -32600, None, id="number"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 3, "params": {}}', -32600, 3, id="no-method"),
        pytest.param(
            b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}', -32600, 3, id="wrong-version"
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, None, id="null-id"
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None, id="bool-id"
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": "a", "method": 5}', -32600, "a", id="method-not-string"
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 4, "method": "x", "params": [1]}',
            -32602,
            4,
            id="positional-params",
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 4, "method": "x", "params": "s"}',
            -32600,
            4,
            id="string-params",
        ),
    ],
)
def test_answered_here(line, code, request_id):
    screened = screen_line(line)
    assert screened.message is None and screened.reply is not None
    assert screened.reply["error"]["code"] == code and screened.reply["id"] == request_id
    assert screened.reply["error"]["data"]["details"]


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "workflow_list", "params": {}}',
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "id": 7, "result": {}}',
    ],
)
def test_passed_on(line):
    screened = screen_line(line)
    assert screened.reply is None and screened.message is not None


def test_null_params_are_dropped_and_shutdown_is_ours():
    assert (
        "params"
        not in screen_line(
            b'{"jsonrpc": "2.0", "id": 1, "method": "workflow_list", "params": null}'
        ).message
    )
    shutdown = screen_line(b'{"jsonrpc": "2.0", "id": 99, "method": "shutdown", "params": {}}')
    assert shutdown.is_shutdown and shutdown.shutdown_id == 99


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"   ",
        b'{"jsonrpc": "2.0", "method": "x", "params": [1]}',
        b'{"jsonrpc": "2.0", "id": true, "result": {}}',
    ],
)
def test_not_answered(line):
    """Blank lines, malformed notifications and malformed responses: JSON-RPC says neither a
    notification nor a response ever gets an answer."""
    screened = screen_line(line)
    assert screened.reply is None and screened.message is None and not screened.is_shutdown


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": 1, "message": "m"}}',
        b'{"jsonrpc": "1.0", "id": 7, "error": {"code": 1, "message": "m"}}',
    ],
)
def test_a_malformed_response_fails_our_request_under_its_id(line):
    """A malformed response is never answered, but it names a request of ours: the server is
    handed an error response under that id, so the call waiting on it ends at once."""
    screened = screen_line(line)
    assert screened.reply is None and not screened.is_shutdown
    assert screened.message is not None
    assert screened.message["id"] == 7 and "error" in screened.message


def test_a_surrogate_pair_is_text_not_a_lone_surrogate():
    screened = screen_line(
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\\ud83d\\ude00"}}'
    )
    assert screened.reply is None and screened.message["params"]["x"] == "\U0001f600"
