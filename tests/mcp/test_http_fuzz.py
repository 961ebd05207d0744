"""Seeded fuzzing of the real `workrail-mcp --transport http` over raw sockets on loopback.

Hostile request lines, headers (Host, Origin, Content-Type, Accept, session ids, protocol
versions, lengths that lie, oversized and malformed headers), bodies (random bytes, truncated
JSON, batches, deep nesting, infinite numbers, lone surrogates, 5 MiB) and sessions (random and
closed ids, event streams opened and dropped, DELETEs), from four threads at once, bounded in
count and time. The server must answer every complete request without a 5xx (503 and 429 are
the admission's answers), every JSON answer must parse, a well-formed request in a live session
must get its own id back, no traceback may reach its log, and at the end an SDK client must still
be served.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.messages import INITIALIZE
from tests.mcp.test_http import http_server

pytestmark = pytest.mark.slow

SEED = 25_2026
THREADS = 4
REQUESTS_PER_THREAD = 300
TIME_LIMIT_SECONDS = 150
VERSIONS = ["2025-06-18", "2025-03-26", "2024-11-05", "2025-11-25", "2026-07-28", "1999-01-01"]


@dataclass
class Case:
    raw: bytes
    expect_id: object = None  # a well-formed request in a live session: its id must come back
    expect_code: int | None = None  # ... with this JSON-RPC error code
    stream: bool = False  # a GET event stream: only its status line is read


def _body_kinds(rng: random.Random) -> bytes:
    kind = rng.randrange(14)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
    if kind == 1:
        text = json.dumps(INITIALIZE)
        return text[: rng.randrange(len(text))].encode()
    if kind == 2:
        return b"[" + json.dumps(INITIALIZE).encode() + b"]"
    if kind == 3:
        depth = rng.choice([65, 300, 5000])
        return (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"workflow_next",'
            b'"arguments":{"workflowId":"test-flow","context":{"x":'
            + b"[" * depth
            + b"]" * depth
            + b"}}}}"
        )
    if kind == 4:
        return b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"n":1e999}}'
    if kind == 5:
        return b'{"jsonrpc":"2.0","id":"\\udc00","method":"ping"}'
    if kind == 6:
        return json.dumps(
            {"jsonrpc": "2.0", "id": rng.choice([None, True, 1.5, [], {}]), "method": "ping"}
        ).encode()
    if kind == 7:
        return json.dumps(
            {"jsonrpc": rng.choice(["1.0", 2, None]), "id": 3, "method": rng.choice([1, "", "x"])}
        ).encode()
    if kind == 8:
        return b"\xef\xbb\xbf" + json.dumps(INITIALIZE).encode()
    if kind == 9:
        return json.dumps({"jsonrpc": "2.0", "result": {}, "id": rng.randrange(10)}).encode()
    if kind == 10:
        return b'{"jsonrpc":"2.0","id":' + b"9" * rng.choice([20, 5000]) + b',"method":"ping"}'
    if kind == 11:
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {
                    "name": rng.choice(
                        ["workflow_get", "workflow_next", "nope", "create_workflow"]
                    ),
                    "arguments": rng.choice(
                        [{"id": "../../etc/passwd"}, {"id": "\x00"}, {"workflowId": 10**40}, []]
                    ),
                },
            }
        ).encode()
    if kind == 12:
        return b'{"jsonrpc":"2.0","id":5,"method":"ping","id":6}'
    return b"{" * rng.randrange(1, 50)


class Fuzzer:
    def __init__(self, host: str, port: int, rng: random.Random) -> None:
        self.host, self.port, self.rng = host, port, rng
        self.sessions: list[str] = []

    def _hostile_headers(self) -> list[tuple[str, str]]:
        rng = self.rng
        own = f"{self.host}:{self.port}"
        choices = [
            ("Host", rng.choice([own, "evil.example", "", own + ".evil", "[::1]:1", "a" * 300])),
            ("Origin", rng.choice(["null", "http://evil.example", f"http://{own}", "\x7f"])),
            (
                "Content-Type",
                rng.choice(["text/plain", "application/json; charset=latin-1", "", "a/b, c/d"]),
            ),
            ("Accept", rng.choice(["*/*", "text/event-stream", "application/json", ""])),
            (
                "Mcp-Session-Id",
                rng.choice(["", "x" * 5000, "../../", "\t", *(self.sessions[-3:] or ["none"])]),
            ),
            ("MCP-Protocol-Version", rng.choice([*VERSIONS, "", "x" * 200, "2025-06-18, 1"])),
            ("Authorization", rng.choice(["Bearer", "Bearer " + "a" * 1000, "Basic Og=="])),
            ("X-Filler", "b" * rng.choice([10, 8000, 20_000])),
        ]
        return rng.sample(choices, rng.randrange(1, 5))

    def _request(
        self,
        method: str,
        body: bytes,
        headers: list[tuple[str, str]],
        path: str = "/mcp",
        lie: bool = False,
    ) -> bytes:
        names = {name.lower() for name, _ in headers}
        lines = [f"{method} {path} HTTP/1.1"]
        if "host" not in names:
            lines.append(f"Host: {self.host}:{self.port}")
        if "accept" not in names:
            lines.append("Accept: application/json, text/event-stream")
        if "content-type" not in names and method == "POST":
            lines.append("Content-Type: application/json")
        lines.extend(f"{name}: {value}" for name, value in headers)
        if "transfer-encoding" not in names:
            # a length that lies short (the rest reads as a next request) or far too long (refused
            # from the header alone); one a little too long would only wait for the body deadline
            length = len(body) + (self.rng.choice([-5, 10**9]) if lie and body else 0)
            lines.append(f"Content-Length: {max(length, 0)}")
        lines.append("Connection: close")
        return "\r\n".join(lines).encode("latin-1", "replace") + b"\r\n\r\n" + body

    def session_request(self, body: dict) -> tuple[bytes, object]:
        session = self.rng.choice(self.sessions)
        headers = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-06-18")]
        return self._request("POST", json.dumps(body).encode(), headers), body.get("id")

    def next_case(self) -> Case:
        rng = self.rng
        roll = rng.random()
        if roll < 0.08 or not self.sessions:
            return Case(self._request("POST", json.dumps(INITIALIZE).encode(), []))
        if roll < 0.25:
            raw, expect = self.session_request(
                rng.choice(
                    [
                        {"jsonrpc": "2.0", "id": rng.randrange(10**6), "method": "ping"},
                        {"jsonrpc": "2.0", "id": f"s-{rng.randrange(999)}", "method": "tools/list"},
                        {
                            "jsonrpc": "2.0",
                            "id": rng.randrange(10**6),
                            "method": "tools/call",
                            "params": {"name": "workflow_list", "arguments": {}},
                        },
                    ]
                )
            )
            return Case(raw, expect_id=expect)
        if roll < 0.28:  # what no answer can hold, in a live session: refused as on stdio
            session = rng.choice(self.sessions)
            number = rng.choice([b"1e999", b"-1E+400", b"[2e0500]"])
            text = rng.choice([b'"\\ud800"', b'"a\\udfff"'])
            request_id = rng.randrange(10**6)
            body = (
                b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"workflow_next",'
                % request_id
            )
            body += (
                b'"arguments":{"workflowId":"test-flow","completedSteps":[],"context":{"v":%s}}}}'
                % rng.choice([number, text])
            )
            headers = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-06-18")]
            return Case(
                self._request("POST", body, headers), expect_id=request_id, expect_code=-32602
            )
        if roll < 0.32:
            session = rng.choice(self.sessions)
            headers = [("Mcp-Session-Id", session), ("Accept", "text/event-stream")]
            return Case(self._request("GET", b"", headers), stream=True)
        if roll < 0.36:
            session = rng.choice(self.sessions)
            return Case(self._request("DELETE", b"", [("Mcp-Session-Id", session)]))
        if roll < 0.42:
            method = rng.choice(["PUT", "PATCH", "OPTIONS", "HEAD", "TRACE", "FOO", "GET"])
            path = rng.choice(["/mcp", "/mcp/", "/mcp?x=1", "/mcp/../mcp", "/mcp%00", "/%2e%2e/"])
            return Case(self._request(method, b"", [], path=path), stream=method == "GET")
        if roll < 0.47:
            return Case(self._request("POST", b"x" * (4 * 1024 * 1024 + 1), []))
        if roll < 0.52:  # not HTTP at all, or a request line that lies
            return Case(
                rng.choice(
                    [
                        bytes(rng.randrange(256) for _ in range(200)) + b"\r\n\r\n",
                        b"POST /mcp HTTP/9.9\r\n\r\n",
                        b"POST  /mcp  HTTP/1.1\r\nHost: x\r\n\r\n",
                        b"GET /mcp HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                        b"POST /mcp HTTP/1.1\r\nHost: " + b"h" * 70_000 + b"\r\n\r\n",
                    ]
                )
            )
        body = _body_kinds(rng)
        headers = self._hostile_headers() if rng.random() < 0.5 else []
        if self.sessions and rng.random() < 0.5:
            headers.append(("Mcp-Session-Id", rng.choice(self.sessions)))
        lie = rng.random() < 0.1
        return Case(self._request("POST", body, headers, lie=lie))

    def send(self, case: Case) -> tuple[int | None, dict[str, str], bytes]:
        with socket.create_connection((self.host, self.port), timeout=15) as connection:
            try:
                connection.sendall(case.raw)
            except OSError:
                pass  # refused mid-body (413, 400): the answer, if any, is read below
            data = b""
            try:
                while chunk := connection.recv(65536):
                    data += chunk
                    if case.stream and b"\r\n\r\n" in data:
                        break
                    if _whole_response(data):
                        break  # a request without "Connection: close" may be kept alive 5 s
            except ConnectionResetError:
                pass
        if not data:
            return None, {}, b""
        head, _, body = data.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(status_line.split()[1]), headers, body


def _whole_response(data: bytes) -> bool:
    """Whether ``data`` holds a whole response, by its length or its last chunk (else the
    connection's end tells)."""
    head, found, body = data.partition(b"\r\n\r\n")
    if not found:
        return False
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:])
    }
    if headers.get(b"transfer-encoding") == b"chunked":
        return body.endswith(b"0\r\n\r\n")
    length = headers.get(b"content-length")
    return length is not None and length.isdigit() and len(body) >= int(length)


def _dechunk(body: bytes) -> bytes:
    out, rest = b"", body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2 :]
    return out


def _messages(headers: dict[str, str], body: bytes) -> list[dict]:
    if headers.get("transfer-encoding") == "chunked":
        body = _dechunk(body)
    kind = headers.get("content-type", "")
    if kind.startswith("application/json") and body:
        return [json.loads(body)]
    if kind.startswith("text/event-stream"):
        return [
            json.loads(line[5:])
            for line in body.decode().splitlines()
            if line.startswith("data:") and line[5:].strip()
        ]
    return []


def test_hostile_http_traffic_from_four_clients(project, tmp_path):
    with http_server(project, tmp_path) as (url, log):
        host, _, port = url.split("/")[2].rpartition(":")
        statuses: Counter[int | None] = Counter()
        problems: list[str] = []
        deadline = time.monotonic() + TIME_LIMIT_SECONDS

        def fuzz(n: int) -> None:
            fuzzer = Fuzzer(host, int(port), random.Random(SEED + n))
            for _ in range(REQUESTS_PER_THREAD):
                if time.monotonic() > deadline:
                    problems.append(f"thread {n}: out of time")
                    return
                case = fuzzer.next_case()
                try:
                    status, headers, body = fuzzer.send(case)
                except TimeoutError:
                    problems.append(f"no answer within 15 s to {case.raw[:300]!r}")
                    continue
                statuses[status] += 1
                if status is not None and status >= 500 and status != 503:
                    problems.append(f"{status} for {case.raw[:200]!r}: {body[:200]!r}")
                if case.stream:
                    continue
                try:
                    messages = _messages(headers, body)
                except ValueError:
                    problems.append(f"unparsable answer {body[:200]!r} to {case.raw[:120]!r}")
                    continue
                if status == 200 and "mcp-session-id" in headers and not case.expect_id:
                    fuzzer.sessions.append(headers["mcp-session-id"])
                if case.expect_id is not None and status == 200:
                    if [m.get("id") for m in messages] != [case.expect_id]:
                        problems.append(f"{case.expect_id!r} answered {messages!r}")
                    elif case.expect_code is not None:
                        code = messages[0].get("error", {}).get("code")
                        if code != case.expect_code:
                            problems.append(f"{case.raw[-120:]!r} answered {messages!r}")

        threads = [threading.Thread(target=fuzz, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIME_LIMIT_SECONDS + 30)
        assert not problems, "\n".join(problems[:10])
        assert statuses[None] < THREADS * REQUESTS_PER_THREAD // 10, statuses
        assert {200, 400, 404, 413} <= set(statuses), statuses
        print(f"HTTP fuzz: {sum(statuses.values())} requests, statuses {dict(statuses)}")

        async def still_served() -> None:
            with anyio.fail_after(30):
                async with Client(streamable_http_client(url)) as client:
                    tools = {t.name for t in (await client.list_tools()).tools}
                    assert "workflow_next" in tools
                    got = await client.call_tool("workflow_get", {"id": "test-flow"})
                    assert not got.is_error

        anyio.run(still_served)
    text = "\n".join(log)
    assert "Traceback" not in text, text[-3000:]
