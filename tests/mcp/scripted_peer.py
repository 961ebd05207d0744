"""The client's side of sampling and elicitation, scripted: a "model" and a "person" as the SDK
client's callbacks, and a client of the real server process (stdio or Streamable HTTP) that
offers them — a fresh process each time (:func:`connected`), or one kept for the module's tests
(:class:`SharedServers`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import CreateMessageResult, ElicitResult, Implementation, TextContent

from tests.mcp.conftest import stdio_parameters
from tests.mcp.shared_server import kept_open
from tests.mcp.test_http import http_server

__all__ = ["Model", "Person", "SharedServers", "connected"]


class Model:
    """Answers each request with the next of ``answers``; keeps the requests."""

    def __init__(self, *answers: str, name: str = "scripted") -> None:
        self.answers = list(answers)
        self.name = name  # the model the client says answered
        self.requests: list = []

    async def __call__(self, _context, params) -> CreateMessageResult:
        self.requests.append(params)
        text = self.answers.pop(0) if self.answers else "nothing"
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=text), model=self.name
        )


class Person:
    """A scripted person: answers each form with the next of ``replies``; keeps what was asked."""

    def __init__(self, *replies: dict) -> None:
        self.replies = list(replies)
        self.asked: list = []

    async def __call__(self, _context, params) -> ElicitResult:
        self.asked.append(params)
        reply = self.replies.pop(0)
        if reply.get("action") in ("decline", "cancel"):
            return ElicitResult(action=reply["action"])
        return ElicitResult(action="accept", content=reply)


def _callbacks(model: Any, person: Any) -> dict[str, Any]:
    """The client offers sampling and elicitation only when it has someone to answer."""
    callbacks: dict[str, Any] = {}
    if model is not None:
        callbacks["sampling_callback"] = model
    if person is not None:
        callbacks["elicitation_callback"] = person
    return callbacks


@asynccontextmanager
async def connected(
    project: Path,
    tmp_path: Path,
    *options: str,
    transport: str = "stdio",
    model: Model | None = None,
    person: Person | None = None,
    mode: str = "legacy",
    client_info: Implementation | None = None,
) -> AsyncIterator[tuple[Any, str | None]]:
    """A client of a new ``workrail-mcp --project project *options`` offering the callbacks
    given; yields it and the dashboard's base URL (HTTP only, else None). ``mode``: the client's
    era (``legacy`` handshake, or ``2026-07-28``); ``client_info``: the name it gives."""
    callbacks: dict[str, Any] = {**_callbacks(model, person), "client_info": client_info}
    if transport == "stdio":
        params = stdio_parameters(project, tmp_path, *options)
        async with Client(params, mode=mode, **callbacks) as client:
            yield client, None
    else:
        with http_server(project, tmp_path, *options) as (url, _):
            async with Client(url, mode=mode, **callbacks) as client:
                yield client, url.removesuffix("/mcp")


class _Relay:
    """A kept stdio client's callbacks: each forwards to the model or person of the test now
    using the client (a stdio server has one client, whose callbacks are fixed at its start)."""

    def __init__(self) -> None:
        self.model: Model | None = None
        self.person: Person | None = None

    async def sample(self, context, params) -> CreateMessageResult:
        assert self.model is not None, "a sampling request outside the test that ran the step"
        return await self.model(context, params)

    async def elicit(self, context, params) -> ElicitResult:
        assert self.person is not None, "an elicitation outside the test that asked for it"
        return await self.person(context, params)


class SharedServers:
    """:func:`connected`, served by server processes kept while consecutive tests of a module
    ask for the same kind: over HTTP one per set of options (each test has a client, so a
    session, of its own), over stdio one per set of options, client era and callbacks offered
    (the test's model or person answer through :class:`_Relay`). At most one process per
    transport is kept: a server with a run store polls it (≈ 0.03 s of CPU a second), so a kept
    server that no test will ask for again would cost more than its start saved. Each process
    has a home (run store) of its own; the tests of a module share its project and tell their
    runs and sessions apart by id. So a module puts the tests that ask for the same kind next to
    each other (a parameter that is a server option: ``parametrize(..., scope="module")``, which
    pytest orders value by value)."""

    def __init__(self, project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.project, self._tmp = project, tmp_path_factory
        # transport -> (what the server was started for, the client or URL, how to end it)
        self._kept: dict[str, tuple[tuple, Any, AsyncExitStack]] = {}

    async def __aenter__(self) -> SharedServers:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for _, _, ending in self._kept.values():
            await ending.aclose()
        self._kept.clear()

    @asynccontextmanager
    async def connected(
        self,
        *options: str,
        transport: str = "stdio",
        model: Model | None = None,
        person: Person | None = None,
        mode: str = "legacy",
    ) -> AsyncIterator[tuple[Any, str | None]]:
        if transport == "stdio":
            key = (options, mode, model is not None, person is not None)
            client, relay = await self._kept_server("stdio", key, self._start_stdio)
            relay.model, relay.person = model, person
            try:
                yield client, None
            finally:
                relay.model = relay.person = None
            return
        url = await self._kept_server("http", options, self._start_http)
        async with Client(url, mode=mode, **_callbacks(model, person)) as client:
            yield client, url.removesuffix("/mcp")

    async def _kept_server(self, transport: str, key: tuple, start) -> Any:
        kept = self._kept.get(transport)
        if kept is not None and kept[0] == key:
            return kept[1]
        if kept is not None:
            await kept[2].aclose()
        ending = AsyncExitStack()
        value = await start(key, ending)
        self._kept[transport] = (key, value, ending)
        return value

    async def _start_stdio(self, key: tuple, ending: AsyncExitStack) -> tuple[Client, _Relay]:
        options, mode, offers_sampling, offers_elicitation = key
        relay = _Relay()
        callbacks = _callbacks(
            relay.sample if offers_sampling else None,
            relay.elicit if offers_elicitation else None,
        )
        params = stdio_parameters(self.project, self._tmp.mktemp("shared-stdio"), *options)
        client = await ending.enter_async_context(
            kept_open(lambda: Client(params, mode=mode, **callbacks))
        )
        return client, relay

    async def _start_http(self, options: tuple[str, ...], ending: AsyncExitStack) -> str:
        home = self._tmp.mktemp("shared-http")
        url, _ = ending.enter_context(http_server(self.project, home, *options))
        return url
