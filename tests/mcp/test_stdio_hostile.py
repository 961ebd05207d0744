"""Hostile lines on stdio (1,000 through a pipe, 10,000 through a live server): every request
answered exactly once, responses never, nothing but JSON-RPC on stdout, the server stays up."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest

from tests.mcp.conftest import by_id, run_stdio, stdio_process
from tests.mcp.messages import INITIALIZE, INITIALIZED

pytestmark = pytest.mark.slow

VALID = '{"jsonrpc": "2.0", "id": %d, "method": "workflow_get", "params": {"id": "test-flow"}}'


def random_bytes(rng: random.Random, _: int) -> bytes:
    data = (
        bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        .replace(b"\n", b" ")
        .replace(b"\r", b" ")
    )
    return data if data.strip() else b"\x00"


def truncated(rng: random.Random, n: int) -> bytes:
    text = VALID % n
    return text[: rng.randrange(1, len(text) - 1)].encode()


def array(rng: random.Random, n: int) -> bytes:
    return rng.choice(
        [b"[]", b"[1, 2, 3]", json.dumps([json.loads(VALID % n)]).encode(), b'[{"jsonrpc": "2.0"}]']
    )


def wrong_types(rng: random.Random, n: int) -> bytes:
    shapes = [
        {"jsonrpc": "2.0", "id": n, "method": 42},
        {"jsonrpc": "2.0", "id": n, "method": "workflow_get", "params": "test-flow"},
        {"jsonrpc": "2.0", "id": n, "method": "workflow_get", "params": ["test-flow"]},
        {"jsonrpc": "2.0", "id": n, "method": "workflow_get", "params": {"id": 7}},
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "workflow_next",
            "params": {"workflowId": "test-flow", "completedSteps": "all"},
        },
        {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": 5}},
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "workflow_get", "arguments": [1]},
        },
        {"jsonrpc": 2, "id": n, "method": "workflow_list"},
        {"jsonrpc": "2.0", "id": {"x": n}, "method": "workflow_list"},
        {"jsonrpc": "2.0", "id": True, "method": "workflow_list"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "workflow_list"},
        {"jsonrpc": "2.0", "id": n},
        {"jsonrpc": "2.0", "id": n, "method": "no/such/method"},
    ]
    extra = [
        b"42",
        b'"a string"',
        b"null",
        b"true",
        b"NaN",
        b'{"jsonrpc": "2.0", "id": %d, "method": "ping", "x": NaN}' % n,
    ]
    choice = rng.randrange(len(shapes) + len(extra))
    return (
        json.dumps(shapes[choice]).encode() if choice < len(shapes) else extra[choice - len(shapes)]
    )


def huge_string(rng: random.Random, n: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "workflow_validate",
            "params": {
                "workflowId": "test-flow",
                "stepId": "understand",
                "output": "x" * 1_000_000,
                "extra": "y",
            },
        }
    ).encode()


def deep_nesting(rng: random.Random, n: int) -> bytes:
    depth = 10_000
    if rng.random() < 0.5:
        return b"[" * depth + b"]" * depth
    context = '{"a":' * depth + "1" + "}" * depth
    return (
        f'{{"jsonrpc": "2.0", "id": {n}, "method": "workflow_next", "params": {{"context": {context}}}}}'
    ).encode()


def parses_to_object_with_id(line: bytes, n: int) -> bool:
    try:
        value = json.loads(line, parse_constant=lambda name: 1 / 0)
    except (ValueError, RecursionError, ZeroDivisionError):
        return False
    return isinstance(value, dict) and value.get("id") == n and value.get("id") is not True


KINDS = [random_bytes, truncated, array, wrong_types, huge_string, deep_nesting]
WEIGHTS = [30, 25, 10, 30, 1, 4]


def test_a_thousand_hostile_lines(project, tmp_path):
    rng = random.Random(20261126)
    hostile = [rng.choices(KINDS, WEIGHTS)[0](rng, 1000 + n) for n in range(1000)]
    messages, code, stderr = run_stdio(
        project,
        tmp_path,
        [
            json.dumps(INITIALIZE).encode(),
            json.dumps(INITIALIZED).encode(),
            *hostile,
            (VALID % 5000).encode(),
        ],
        timeout=120,
    )
    assert code == 0, stderr[-2000:]
    # one answer per hostile line, plus initialize and the valid request at the end
    assert len(messages) == len(hostile) + 2
    for message in messages:
        assert set(message) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"}), message
        if "error" in message:
            assert isinstance(message["error"]["code"], int) and message["error"]["message"]
    answers = by_id(messages)
    for n, line in enumerate(hostile, start=1000):
        if parses_to_object_with_id(line, n):
            assert n in answers, line[:200]  # a request with a usable id is answered under that id
    assert answers[5000]["result"]["id"] == "test-flow"


def test_a_line_over_the_size_limit_is_refused_and_skipped(project, tmp_path):
    from workrail_mcp.stdio import MAX_LINE_BYTES

    oversized = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "workflow_list", "params": {"x": "'
        + b"y" * MAX_LINE_BYTES
        + b'"}}'
    )
    messages, code, _ = run_stdio(
        project,
        tmp_path,
        [json.dumps(INITIALIZE).encode(), oversized, (VALID % 2).encode()],
        timeout=120,
    )
    answers = by_id(messages)
    assert (
        answers[None]["error"]["code"] == -32600
        and "longer than" in answers[None]["error"]["data"]["details"]
    )
    assert answers[2]["result"]["id"] == "test-flow"
    assert len(messages) == 3 and code == 0


# -- 10,000 lines through a live server ---------------------------------------------------------

TOOLS = [
    "workflow_list",
    "workflow_get",
    "workflow_next",
    "workflow_validate",
    "workflow_schema",
    "workflow_lint",
    "list_workflows",
    "create_workflow",
]
ARGUMENT_NAMES = ["id", "workflowId", "completedSteps", "context", "stepId", "output", "name"]
ODD_STRINGS = [
    "",
    "\ud800",  # a lone surrogate: valid JSON text (as an escape), not encodable as UTF-8
    "\udfff\ud800",
    "\x00\x01\x1b[31m",
    "../../etc/passwd",
    "test-flow\n",
    "é" * 100,
    "\u202e\ufeff",
    "🦄" * 50,
    "x" * 70_000,
]


def random_value(rng: random.Random, depth: int = 0):
    """Any JSON value, mostly small; strings include lone surrogates and control characters."""
    kind = rng.randrange(10 if depth < 4 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 2**31, 2**63, -(2**70), rng.randrange(-1000, 1000)])
    if kind == 3:
        return rng.choice([0.5, -1e308, 1e-320, 3.14])
    if kind in (4, 5):
        return rng.choice(ODD_STRINGS)
    if kind == 6:
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(20)))
    if kind in (7, 8):
        return {
            rng.choice([*ARGUMENT_NAMES, *ODD_STRINGS[:4]]): random_value(rng, depth + 1)
            for _ in range(rng.randrange(4))
        }
    return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def tool_call(rng: random.Random, n: int) -> bytes:
    """A well-formed request with hostile arguments, as a direct call or through tools/call."""
    tool = rng.choice(TOOLS)
    arguments = {
        name: random_value(rng) for name in rng.sample(ARGUMENT_NAMES, rng.randrange(1, 4))
    }
    if rng.random() < 0.5:
        message = {"jsonrpc": "2.0", "id": n, "method": tool, "params": arguments}
    else:
        message = {
            "jsonrpc": "2.0",
            "id": f"s{n}",
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    return json.dumps(message).encode()


def protocol_method(rng: random.Random, n: int) -> bytes:
    """Other MCP methods, real and not, with random params (never `shutdown`: it ends the test)."""
    method = rng.choice(
        [
            "ping",
            "initialize",
            "tools/list",
            "prompts/list",
            "prompts/get",
            "resources/list",
            "resources/read",
            "resources/templates/list",
            "completion/complete",
            "logging/setLevel",
            "server/discover",
            "x" * 5000,
            "rpc.anything",
            "",
        ]
    )
    params = random_value(rng, 2)
    message = {"jsonrpc": "2.0", "id": n, "method": method}
    if isinstance(params, dict) or rng.random() < 0.3:
        message["params"] = params
    return json.dumps(message).encode()


def response(rng: random.Random, n: int) -> bytes:
    """A client's response (to nothing the server asked): never answered."""
    body = rng.choice(
        [
            {"result": random_value(rng)},
            {"error": {"code": rng.randrange(-33000, 0), "message": "no"}},
            {"error": random_value(rng)},
            {"result": {}, "error": {"code": 1, "message": "both"}},
        ]
    )
    return json.dumps({"jsonrpc": "2.0", "id": n, **body}).encode()


def notification(rng: random.Random, n: int) -> bytes:
    """Notifications, known and not, with random params; cancellations name unknown requests."""
    method = rng.choice(
        [
            "notifications/initialized",
            "notifications/cancelled",
            "notifications/roots/list_changed",
            "notifications/progress",
            "notifications/no-such-thing",
        ]
    )
    params = random_value(rng, 2)
    if method == "notifications/cancelled":
        params = {"requestId": -n, "reason": random_value(rng, 3)}
    message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def odd_encoding(rng: random.Random, n: int) -> bytes:
    """A valid request wrapped in bytes a careless client might send."""
    line = (VALID % n).encode()
    return rng.choice(
        [
            b"\xef\xbb\xbf" + line,  # a byte-order mark
            line + b"\r",  # CRLF line ending
            line.replace(b'"test-flow"', b'"test-\xff-flow"'),  # invalid UTF-8 inside
            line.replace(b'"test-flow"', b'"\xc0\xaf"'),  # overlong encoding
            line.replace(b"workflow_get", b"workflow\x00get"),
            b"   \t" + line + b"  \t ",
            line[:-1] + b', "id": "dup%d"}' % n,  # a duplicate key: the last one counts
            b'{"jsonrpc": "2.0", "id": %d, "method": "ping", "params": {"n": 1%s}}'
            % (n, b"0" * 5000),
        ]
    )


HOSTILE_KINDS = [
    random_bytes,
    truncated,
    array,
    wrong_types,
    huge_string,
    deep_nesting,
    tool_call,
    protocol_method,
    response,
    notification,
    odd_encoding,
]
HOSTILE_WEIGHTS = [12, 10, 4, 14, 0.05, 0.3, 30, 10, 8, 6, 6]


def strict_json(line: bytes):
    try:
        return json.loads(line.decode("utf-8"), parse_constant=lambda name: 1 / 0)
    except (ValueError, RecursionError, ZeroDivisionError):
        return None


def usable_id(value) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def test_ten_thousand_hostile_lines_through_a_live_server(project, tmp_path):
    """Seeded; written while the answers are read. The server stays up, writes only JSON-RPC
    lines, answers every request with a usable id exactly once and every response never, and
    still serves a normal request (and shutdown) at the end."""
    rng = random.Random(14_10_000)
    hostile = [
        rng.choices(HOSTILE_KINDS, HOSTILE_WEIGHTS)[0](rng, 10_000 + n) for n in range(10_000)
    ]
    process = stdio_process(project, tmp_path)
    stdout: list[bytes] = []
    final_seen = threading.Event()

    def read() -> None:
        for raw in process.stdout:
            stdout.append(raw)
            if b'"id":"final"' in raw:
                final_seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = time.monotonic()
    try:
        process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        process.stdin.write(json.dumps(INITIALIZED).encode() + b"\n")
        for line in hostile:
            process.stdin.write(line + b"\n")
        final = {"jsonrpc": "2.0", "id": "final", "method": "workflow_get"}
        process.stdin.write(json.dumps({**final, "params": {"id": "test-flow"}}).encode() + b"\n")
        process.stdin.flush()
        assert final_seen.wait(timeout=120), "no answer to the normal request after the fuzz"
        elapsed = time.monotonic() - started
        assert process.poll() is None, "the server died"
        process.stdin.write(b'{"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}\n')
        process.stdin.close()
        assert process.wait(timeout=30) == 0
        reader.join(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()

    messages = []
    for raw in stdout:
        message = json.loads(raw)  # every stdout line is exactly one JSON value...
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", raw[:200]
        assert set(message) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"}), raw[:200]
        messages.append(message)  # ...and a JSON-RPC response
    counts: dict = {}
    for message in messages:
        key = json.dumps(message["id"])
        counts[key] = counts.get(key, 0) + 1
    for line in hostile:
        value = strict_json(line)
        if not isinstance(value, dict) or not usable_id(value.get("id")):
            continue
        key = json.dumps(value["id"])
        if isinstance(value.get("method"), str) and value.get("jsonrpc") == "2.0":
            assert counts.get(key) == 1, (counts.get(key), line[:300])  # exactly one answer
        elif "method" not in value and ("result" in value or "error" in value):
            assert key not in counts, line[:300]  # a response is never answered
    answers = {json.dumps(m["id"]): m for m in messages}
    assert answers['"final"']["result"]["id"] == "test-flow"
    assert answers['"bye"'] == {"jsonrpc": "2.0", "id": "bye", "result": None}
    assert len(messages) <= len(hostile) + 3
    print(f"10,000 hostile lines: {len(messages)} answers in {elapsed:.1f} s")
