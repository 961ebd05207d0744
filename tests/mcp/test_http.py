"""Streamable HTTP: the start banner, the bearer token, DNS-rebinding protection, 20 clients at once."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import server_command, server_env
from tests.mcp.messages import INITIALIZE
from workrail_mcp.__main__ import parse_args
from workrail_mcp.web import BODY_TIMEOUT_SECONDS, HEADER_TIMEOUT_SECONDS
from workrail_mcp.web.listener import bind_listener

pytestmark = pytest.mark.slow

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@contextmanager
def http_server(
    project, tmp_path, *options: str, token: str | None = None
) -> Iterator[tuple[str, list[str]]]:
    """`workrail-mcp --transport http --port 0`; yields its URL (read from the banner) and its
    log: the banner, then every later line of its stderr (complete once the block has exited)."""
    extra = {"WORKRAIL_HTTP_TOKEN": token} if token else {}
    process = subprocess.Popen(
        server_command(project, "--transport", "http", "--port", "0", *options),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path, **extra),
        cwd=tmp_path,
        text=True,
    )
    banner: list[str] = []
    drain = threading.Thread(
        target=lambda: banner.extend(line.rstrip("\n") for line in process.stderr)
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            assert line, f"server exited: {process.poll()} {banner}"
            banner.append(line.rstrip("\n"))
            if line.startswith("Press Ctrl+C"):
                break
        match = re.search(r"listening on (http://\S+)", "\n".join(banner))
        assert match, banner
        # drained meanwhile, so that a server that logs much never blocks on a full pipe
        drain.start()
        yield match.group(1), banner
    finally:
        process.terminate()
        process.wait(timeout=10)
        if drain.is_alive():
            drain.join(10)
        process.stderr.close()


async def test_accepted_connections_send_at_once():
    """The listener's connections have TCP_NODELAY, set by asyncio (which serves uvicorn's) only
    on sockets that say they are TCP. Without it, a response written as headers then body waited
    for the client's delayed ACK of the headers: ≈ 40 ms on every request of a kept-alive
    connection (docs/benchmarks.md, The MCP server)."""
    listener = bind_listener("127.0.0.1", 0)
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            connection = transport.get_extra_info("socket")
            accepted.set_result(connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
    async with server:
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        try:
            assert await asyncio.wait_for(accepted, 10) == 1
        finally:
            writer.close()
            await writer.wait_closed()


def test_banner_says_where_what_and_how(served_with_banner):
    """The banner of the module's server (its default options): a start of its own would say
    the same (the suite's time, docs/benchmarks.md)."""
    url, banner = served_with_banner
    text = "\n".join(banner)
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert int(url.split(":")[2].split("/")[0]) > 0  # --port 0: the port really bound, not 0
    assert re.search(r"Loaded \d+ workflows; workflow files are re-scanned every 2 s", text)
    assert f"claude mcp add --transport http workrail {url}" in text


def test_invalid_files_are_counted_in_the_banner(project, tmp_path):
    (project / "workflows" / "broken.json").write_text("{not json")
    with http_server(project, tmp_path) as (_, banner):
        assert "1 invalid file left out (see `workrail validate`)" in "\n".join(banner)


@pytest.fixture(scope="module")
def served_with_banner(shared_project, tmp_path_factory) -> Iterator[tuple[str, list[str]]]:
    """One server (no token) for the module's tests that need no start of their own: each
    sends its own requests or sessions and none changes what the others are served (~1.4 s of
    CPU saved per test). Yields its URL and its log (the banner first)."""
    with http_server(shared_project, tmp_path_factory.mktemp("served")) as (url, banner):
        yield url, banner


@pytest.fixture(scope="module")
def served(served_with_banner) -> str:
    return served_with_banner[0]


@pytest.fixture(scope="module")
def served_with_token(shared_project, tmp_path_factory) -> Iterator[tuple[str, list[str]]]:
    """The same with ``WORKRAIL_HTTP_TOKEN=s3cret-token``; yields its URL and its log."""
    home = tmp_path_factory.mktemp("served-with-token")
    with http_server(shared_project, home, token="s3cret-token") as (url, banner):
        yield url, banner


def post(url: str, body, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.post(
        url, content=json.dumps(body), headers={**ACCEPT, **(headers or {})}, timeout=10
    )


def test_the_token_is_enforced(served_with_token):
    url, banner = served_with_token
    assert "WORKRAIL_HTTP_TOKEN" in "\n".join(banner)
    assert "s3cret-token" not in "\n".join(banner)
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
        refused = post(url, INITIALIZE, headers)
        assert refused.status_code == 401 and refused.content == b""
    accepted = post(url, INITIALIZE, {"Authorization": "Bearer s3cret-token"})
    assert accepted.status_code == 200 and "workflowlookup" in accepted.text


def test_dns_rebinding_is_refused(served):
    url = served
    port = url.split(":")[2].split("/")[0]
    assert post(url, INITIALIZE, {"Host": f"evil.example:{port}"}).status_code in (
        400,
        403,
        421,
    )
    assert post(url, INITIALIZE, {"Origin": "http://evil.example"}).status_code in (400, 403)
    assert post(url, INITIALIZE, {"Host": f"localhost:{port}"}).status_code == 200


async def one_session(url: str, token: str, mode: str, n: int) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            assert "workflow_next" in {tool.name for tool in (await client.list_tools()).tools}
            listed = await client.call_tool("workflow_list", {})
            assert "test-flow" in {w["id"] for w in listed.structured_content["workflows"]}
            completed: list[str] = []
            for _ in range(5):
                step = await client.call_tool(
                    "workflow_next", {"workflowId": "test-flow", "completedSteps": completed}
                )
                assert not step.is_error, step.content
                if step.structured_content["isComplete"]:
                    break
                completed.append(step.structured_content["step"]["id"])
            assert completed == ["understand", "implement"]
            check = await client.call_tool(
                "workflow_validate",
                {"workflowId": "test-flow", "stepId": "understand", "output": f"requirements #{n}"},
            )
            assert check.structured_content["valid"] is True
            assert "test-flow" in {p.name for p in (await client.list_prompts()).prompts}


async def test_twenty_concurrent_clients(served_with_token):
    url, _ = served_with_token
    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(
                    one_session, url, "s3cret-token", "legacy" if n % 2 else "2026-07-28", n
                )


async def test_workflow_changes_reach_http_clients_in_both_eras(served, shared_project):
    from tests.mcp.conftest import TEST_FLOW, write_workflow

    url, project = served, shared_project
    seen: list[str] = []

    async def on_message(message) -> None:
        if isinstance(getattr(message, "method", None), str):
            seen.append(message.method)

    async with httpx2.AsyncClient(timeout=30) as http:
        legacy = Client(streamable_http_client(url, http_client=http), mode="legacy")
        legacy.message_handler = on_message
        async with (
            legacy,
            Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as modern,
        ):
            await legacy.list_prompts()
            async with modern.listen(
                prompts_list_changed=True, resources_list_changed=True
            ) as events:
                write_workflow(
                    project / "workflows", {**TEST_FLOW, "id": "late-flow", "name": "Late"}
                )
                with anyio.fail_after(20):
                    event = await events.__anext__()
                    while "notifications/prompts/list_changed" not in seen:
                        await anyio.sleep(0.05)
            assert type(event).__name__ in ("PromptsListChanged", "ResourcesListChanged")
            assert "late-flow" in {p.name for p in (await modern.list_prompts()).prompts}


def host_and_port(url: str) -> tuple[str, int]:
    address = url.split("/")[2]
    host, _, port = address.rpartition(":")
    return host, int(port)


def test_only_the_servers_own_origin_is_accepted(served):
    """Origin is compared by scheme, host and port: another local port is another site."""
    url = served
    _, port = host_and_port(url)
    for origin in (
        f"http://127.0.0.1:{port + 1}",
        f"http://localhost:{port + 1}",
        "http://localhost:1",
        f"https://127.0.0.1:{port}",
        f"http://127.0.0.1:{port}.evil.example",
        f"http://127.0.0.1:{port}0",
        "http://127.0.0.1",
        "null",
    ):
        assert post(url, INITIALIZE, {"Origin": origin}).status_code == 403, origin
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        assert post(url, INITIALIZE, {"Origin": origin}).status_code == 200, origin


def test_an_extra_origin_can_be_allowed(project, tmp_path):
    with http_server(
        project, tmp_path, "--allowed-origin", "http://localhost:6274", token=None
    ) as (url, _):
        assert post(url, INITIALIZE, {"Origin": "http://localhost:6274"}).status_code == 200
        assert post(url, INITIALIZE, {"Origin": "http://localhost:6275"}).status_code == 403


def test_the_bearer_scheme_is_case_insensitive(served_with_token):
    url, _ = served_with_token
    for header in ("bearer s3cret-token", "BEARER s3cret-token", "bEaReR  s3cret-token"):
        assert post(url, INITIALIZE, {"Authorization": header}).status_code == 200, header
    for header in ("Basic s3cret-token", "bearer S3CRET-TOKEN", "bearers3cret-token", "bearer"):
        assert post(url, INITIALIZE, {"Authorization": header}).status_code == 401, header


# The deadlines of the slowloris test's server: shorter than the defaults (HEADER_TIMEOUT_SECONDS,
# BODY_TIMEOUT_SECONDS: 10 and 30 s, the same code with other figures) so that it waits 5 s, not
# 30; the header deadline plus the bound's margin stays under uvicorn's 5 s idle keep-alive, which
# must not be what closes the kept-alive connection.
HEADER_SECONDS, BODY_SECONDS = 2.0, 5.0


def open_raw(url: str) -> socket.socket:
    connection = socket.create_connection(host_and_port(url), timeout=30)
    connection.settimeout(HEADER_SECONDS + 10)
    return connection


def closed_after(connection: socket.socket, started: float) -> float:
    """Seconds from `started` until the server closed the connection (reads what it sends)."""
    with connection:
        try:
            while connection.recv(4096):
                pass
        except ConnectionResetError:
            pass
        except TimeoutError:
            return float("inf")  # still open when we gave up
        return time.monotonic() - started


def test_the_deadlines_default_to_the_documented_figures():
    args = parse_args(["--transport", "http"])
    assert (args.header_timeout, args.body_timeout) == (
        HEADER_TIMEOUT_SECONDS,
        BODY_TIMEOUT_SECONDS,
    )


def test_connections_that_never_finish_their_request_are_closed(project, tmp_path):
    """Slowloris: silent, half a request line, a header trickled byte by byte, a second request
    on a kept-alive connection that never ends, and a body trickled byte by byte; each is closed
    by its deadline (``--header-timeout``, ``--body-timeout``) while a normal request is still
    served."""
    deadlines = ("--header-timeout", f"{HEADER_SECONDS:g}", "--body-timeout", f"{BODY_SECONDS:g}")
    with http_server(project, tmp_path, *deadlines) as (url, _):
        slow_clients_are_closed(url)


def slow_clients_are_closed(url: str) -> None:
    host, port = host_and_port(url)
    start = f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n".encode()
    request = json.dumps(INITIALIZE).encode()
    full = (
        start
        + b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(request)
        + request
    )
    results: dict[str, float] = {}

    def silent() -> None:
        connection, started = open_raw(url), time.monotonic()
        results["silent"] = closed_after(connection, started)

    def half_line() -> None:
        connection, started = open_raw(url), time.monotonic()
        connection.sendall(b"POST /mc")
        results["half line"] = closed_after(connection, started)

    def trickle() -> None:
        connection, started = open_raw(url), time.monotonic()
        connection.sendall(start)
        try:
            for byte in b"X-Slow: " + b"a" * 1000:
                connection.sendall(bytes([byte]))
                time.sleep(0.25)
        except OSError:  # closed under us: what we want
            pass
        results["trickle"] = closed_after(connection, started)

    def kept_alive() -> None:
        connection = open_raw(url)
        connection.sendall(full)
        assert b"200 OK" in connection.recv(65536)
        started = time.monotonic()
        connection.sendall(start)  # a second request whose headers never end
        try:
            for _ in range(100):
                connection.sendall(b"X: y\r\n")
                time.sleep(0.25)
        except OSError:
            pass
        results["kept alive"] = closed_after(connection, started)

    def slow_body() -> None:
        connection = open_raw(url)
        connection.settimeout(BODY_SECONDS + 10)
        head = full[: full.index(b"\r\n\r\n") + 4]
        connection.sendall(head + request[:10])
        started = time.monotonic()  # the headers are in: the body's deadline runs
        try:
            for byte in request[10:]:
                connection.sendall(bytes([byte]))
                time.sleep(1)
        except OSError:
            pass
        results["slow body"] = closed_after(connection, started)

    kinds = (silent, half_line, trickle, kept_alive, slow_body)
    threads = [threading.Thread(target=kind) for kind in kinds]
    for thread in threads:
        thread.start()
    time.sleep(1)
    assert post(url, INITIALIZE).status_code == 200  # the server still serves others
    for thread in threads:
        thread.join(timeout=BODY_SECONDS + 20)
    assert len(results) == len(kinds), results
    for name, seconds in results.items():
        limit = BODY_SECONDS if name == "slow body" else HEADER_SECONDS
        assert limit - 1 < seconds < limit + 2.5, (name, seconds)
