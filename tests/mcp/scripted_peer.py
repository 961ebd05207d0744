"""The client's side of sampling and elicitation, scripted: a "model" and a "person" as the SDK
client's callbacks, and a client of the real server process (stdio or Streamable HTTP) that
offers them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp_types import CreateMessageResult, ElicitResult, TextContent

from tests.mcp.conftest import stdio_parameters
from tests.mcp.test_http import http_server

__all__ = ["Model", "Person", "connected"]


class Model:
    """Answers each request with the next of ``answers``; keeps the requests."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list = []

    async def __call__(self, _context, params) -> CreateMessageResult:
        self.requests.append(params)
        text = self.answers.pop(0) if self.answers else "nothing"
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=text), model="scripted"
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


@asynccontextmanager
async def connected(
    project: Path,
    tmp_path: Path,
    *options: str,
    transport: str = "stdio",
    model: Model | None = None,
    person: Person | None = None,
    mode: str = "legacy",
) -> AsyncIterator[tuple[Any, str | None]]:
    """A client of ``workrail-mcp --project project *options`` offering the callbacks given;
    yields it and the dashboard's base URL (HTTP only, else None). ``mode``: the client's era
    (``legacy`` handshake, or ``2026-07-28``)."""
    callbacks: dict[str, Any] = {}
    if model is not None:
        callbacks["sampling_callback"] = model
    if person is not None:
        callbacks["elicitation_callback"] = person
    if transport == "stdio":
        params = stdio_parameters(project, tmp_path, *options)
        async with Client(params, mode=mode, **callbacks) as client:
            yield client, None
    else:
        with http_server(project, tmp_path, *options) as (url, _):
            async with Client(url, mode=mode, **callbacks) as client:
                yield client, url.removesuffix("/mcp")
