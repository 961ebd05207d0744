"""1,000 hostile lines on stdio: every request-shaped line answered, nothing else on stdout."""

from __future__ import annotations

import json
import random

import pytest

from tests.mcp.conftest import by_id, run_stdio
from tests.mcp.test_stdio_protocol import INITIALIZE, INITIALIZED

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
