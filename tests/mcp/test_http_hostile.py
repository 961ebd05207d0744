"""Hostile clients of the real `workrail-mcp --transport http`: numbers and strings no answer can
hold, floods of sessions and of event streams from one address and from many."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp import Client
from mcp_types import ElicitResult

from tests.mcp.messages import INITIALIZE, INITIALIZED
from tests.mcp.test_confirmation import NOTES
from tests.mcp.test_http import ACCEPT, http_server
from workrail_mcp.client_waits import (
    MAX_WAITING_CALLS,
    MAX_WAITING_CALLS_PER_CLIENT,
    ClientDidNotReply,
)
from workrail_mcp.http_sessions import (
    MAX_SESSIONS,
    MAX_SESSIONS_PER_CLIENT,
    MAX_STREAMS,
    MAX_STREAMS_PER_CLIENT,
)

pytestmark = pytest.mark.slow


def client_from(address: str) -> httpx2.Client:
    """An HTTP client whose connections come from ``address`` (any of 127.0.0.0/8 on Linux)."""
    return httpx2.Client(
        transport=httpx2.HTTPTransport(local_address=address), headers=ACCEPT, timeout=30
    )


def rpc_result(response: httpx2.Response) -> dict:
    """The JSON-RPC message of a POST's answer, sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    raise AssertionError(f"no message in {response.status_code} {response.text[:200]!r}")


def open_session(http: httpx2.Client, url: str) -> str:
    answer = http.post(url, content=json.dumps(INITIALIZE))
    assert answer.status_code == 200, (answer.status_code, answer.text[:200])
    session = answer.headers["mcp-session-id"]
    notified = http.post(
        url,
        content=json.dumps(INITIALIZED),
        headers={"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"},
    )
    assert notified.status_code == 202
    return session


def call(http: httpx2.Client, url: str, session: str, body: bytes | dict) -> httpx2.Response:
    return http.post(
        url,
        content=body if isinstance(body, bytes) else json.dumps(body),
        headers={"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"},
    )


def ping(http: httpx2.Client, url: str, session: str) -> int:
    return call(http, url, session, {"jsonrpc": "2.0", "id": 7, "method": "ping"}).status_code


@pytest.fixture(scope="module")
def served(shared_project, tmp_path_factory) -> Iterator[str]:
    """One server for the tests whose point is not a server of their own: the refused numbers
    (one session) and the flood from one address (its own address's sessions, evicted per
    address). The tests that fill the whole server keep a server each: what they fill is
    server-wide."""
    with http_server(shared_project, tmp_path_factory.mktemp("hostile-served")) as (url, _):
        yield url


def test_infinite_numbers_and_lone_surrogates_are_refused_as_on_stdio(served):
    """`1e999` used to reach the tool as infinity and come back as null."""
    url = served
    # an address of its own: the flood test counts 127.0.0.1's sessions on this server
    with client_from("127.0.0.9") as http:
        session = open_session(http, url)
        for arguments, why in (
            (b'{"n": 1e999}', "too large"),
            (b'{"n": [-2E+400]}', "too large"),
            (b'{"s": "\\ud800"}', "surrogate"),
        ):
            body = (
                b'{"jsonrpc": "2.0", "id": "x-1", "method": "tools/call", "params": '
                b'{"name": "workflow_next", "arguments": {"workflowId": "test-flow", '
                b'"completedSteps": [], "context": ' + arguments + b"}}}"
            )
            answer = call(http, url, session, body)
            message = rpc_result(answer)
            assert message["id"] == "x-1", message
            assert message["error"]["code"] == -32602, message
            assert why in message["error"]["data"]["details"]
        # a notification holding one is accepted and never answered
        note = b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"p": 1e999}}'
        assert call(http, url, session, note).status_code == 202
        # numbers that fit, and the same text inside a string, still go through
        fine = call(
            http,
            url,
            session,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "workflow_next",
                    "arguments": {
                        "workflowId": "test-flow",
                        "completedSteps": [],
                        "context": {"n": 1e300, "s": "1e999"},
                    },
                },
            },
        )
        result = rpc_result(fine)["result"]
        assert not result.get("isError"), result
        assert result["structuredContent"]["step"]["id"] == "understand"


def test_a_flood_of_sessions_from_one_address_evicts_only_its_own(served):
    """The address past its share loses its least recently used sessions; another address's
    session, and its newest ones, keep working."""
    url = served
    with (
        client_from("127.0.0.1") as flood,
        client_from("127.0.0.2") as other,
    ):
        bystander = open_session(other, url)
        opened = [open_session(flood, url) for _ in range(MAX_SESSIONS_PER_CLIENT + 8)]
        assert [ping(flood, url, s) for s in opened[:8]] == [404] * 8
        assert {ping(flood, url, s) for s in opened[8:]} == {200}
        assert ping(other, url, bystander) == 200


def test_a_full_server_still_admits_a_new_client(project, tmp_path):
    """Many addresses fill the server: it never holds more than MAX_SESSIONS, each new session
    evicts one of the largest holder's, and a new address still gets in."""
    holders = MAX_SESSIONS // MAX_SESSIONS_PER_CLIENT + 1
    with http_server(project, tmp_path) as (url, _):
        addresses = [f"127.0.1.{n + 1}" for n in range(holders)]

        def fill(address: str) -> list[str]:
            with client_from(address) as http:
                return [open_session(http, url) for _ in range(MAX_SESSIONS_PER_CLIENT)]

        with ThreadPoolExecutor(8) as pool:
            opened = [s for sessions in pool.map(fill, addresses) for s in sessions]
        assert len(opened) > MAX_SESSIONS
        with client_from("127.0.2.1") as newcomer:
            fresh = open_session(newcomer, url)
            assert ping(newcomer, url, fresh) == 200

        def alive_of(sessions: list[str]) -> int:
            with client_from("127.0.1.1") as http:
                return sum(ping(http, url, s) == 200 for s in sessions)

        with ThreadPoolExecutor(8) as pool:  # 1,024 pings: the server's turns, not the client's
            alive = sum(pool.map(alive_of, [opened[n::8] for n in range(8)]))
        assert alive == MAX_SESSIONS - 1, alive  # the newcomer's is the other one


def open_stream(address: str, url: str, session: str) -> tuple[socket.socket, bytes]:
    """A GET event stream held open on a raw socket from ``address``; its status line."""
    host, _, port = url.split("/")[2].rpartition(":")
    connection = socket.create_connection(
        (host, int(port)), timeout=10, source_address=(address, 0)
    )
    connection.sendall(
        f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
        f"mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n\r\n".encode()
    )
    return connection, connection.recv(4096).split(b"\r\n", 1)[0]


def stream_ended(connection: socket.socket) -> bool:
    connection.settimeout(10)
    data = b""
    try:
        while chunk := connection.recv(65536):
            data += chunk
            if data.endswith(b"0\r\n\r\n"):
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_event_streams_are_limited_per_address_and_in_all(project, tmp_path):
    """One address gets MAX_STREAMS_PER_CLIENT streams, then 429; when MAX_STREAMS are open the
    largest holder's oldest is closed to make room, so a new client still gets one."""
    held: list[socket.socket] = []
    with http_server(project, tmp_path) as (url, _):
        try:
            with client_from("127.0.0.1") as http:
                sessions = [open_session(http, url) for _ in range(MAX_STREAMS_PER_CLIENT + 1)]
            statuses = []
            for session in sessions:
                connection, status = open_stream("127.0.0.1", url, session)
                held.append(connection)
                statuses.append(status)
            assert statuses[:-1] == [b"HTTP/1.1 200 OK"] * MAX_STREAMS_PER_CLIENT, statuses
            assert statuses[-1].startswith(b"HTTP/1.1 429"), statuses
            # fill the server's streams from other addresses
            addresses = [f"127.0.3.{n + 1}" for n in range(MAX_STREAMS // MAX_STREAMS_PER_CLIENT)]

            def streams_from(address: str) -> list[tuple[socket.socket, bytes]]:
                with client_from(address) as http:
                    ids = [open_session(http, url) for _ in range(MAX_STREAMS_PER_CLIENT)]
                return [open_stream(address, url, s) for s in ids]

            with ThreadPoolExecutor(8) as pool:
                for opened in pool.map(streams_from, addresses):
                    held.extend(c for c, _ in opened)
                    assert {s for _, s in opened} == {b"HTTP/1.1 200 OK"}
            # the first address's oldest stream was ended to make room (its chunked body ends,
            # or the connection closes)
            assert stream_ended(held[0])
        finally:
            for connection in held:
                connection.close()


async def test_calls_left_waiting_for_their_clients_do_not_freeze_the_others(project, tmp_path):
    """Sessions that leave every confirmation unanswered, with more calls asking than tool calls
    have worker threads: each session gets MAX_WAITING_CALLS_PER_CLIENT of them waiting, the
    server MAX_WAITING_CALLS in all, each other call is answered at once (−32009), and another
    client's tools/call is answered meanwhile. Before, every call held a worker thread until the
    reply, and with all of them held every other client's tools/call hung."""
    workers = int(anyio.to_thread.current_default_thread_limiter().total_tokens)
    per_session = 2 * MAX_WAITING_CALLS_PER_CLIENT + 1
    sessions = workers // per_session + 2
    total = sessions * per_session
    assert total > workers and sessions * MAX_WAITING_CALLS_PER_CLIENT > MAX_WAITING_CALLS
    asked: list[int] = []  # the session of each elicitation/create received
    refused: list[dict] = []
    settled, released = anyio.Event(), anyio.Event()

    def settle() -> None:
        if len(asked) + len(refused) == total:
            settled.set()

    def person_of(session: int):
        async def answers_at_the_end(_context, _params):
            asked.append(session)
            settle()
            await released.wait()
            return ElicitResult(action="decline")

        return answers_at_the_end

    async def confirm(client, token: str) -> None:
        answer = await client.call_tool(
            "continue_workflow", {"continueToken": token, "output": {"notesMarkdown": NOTES}}
        )
        if answer.is_error:
            refused.append(json.loads(answer.content[0].text)["error"])
            settle()

    with http_server(project, tmp_path) as (url, _):
        async with AsyncExitStack() as stack:
            tokens = []
            for session in range(sessions):
                client = await stack.enter_async_context(
                    Client(url, mode="legacy", elicitation_callback=person_of(session))
                )
                started = await client.call_tool(
                    "start_workflow",
                    {"workflowId": "test-flow", "workspacePath": str(project), "goal": "wait"},
                )
                tokens.append((client, started.structured_content["continueToken"]))
            async with anyio.create_task_group() as calls:
                for client, token in tokens:
                    for _ in range(per_session):
                        calls.start_soon(confirm, client, token)
                with anyio.fail_after(30):
                    await settled.wait()
                async with Client(url, mode="legacy") as bystander:
                    with anyio.fail_after(10):
                        listed = await bystander.call_tool("workflow_list", {})
                assert not listed.is_error
                assert len(asked) == MAX_WAITING_CALLS, len(asked)
                assert max(asked.count(s) for s in set(asked)) <= MAX_WAITING_CALLS_PER_CLIENT
                assert {e["code"] for e in refused} == {ClientDidNotReply.code}
                assert {e["data"]["reason"] for e in refused} == {"busy"}
                assert "answer it again later" in refused[0]["message"]
                released.set()  # the waiting calls end: the clients can close
