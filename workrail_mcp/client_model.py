"""The client's model, asked through `sampling/createMessage` (the server's ``--sampling``).

Only when the server was started with ``--sampling`` and the client declared the sampling
capability. On the handshake revisions the request goes to the client as a request of the
server's; on 2026-07-28 it rides an ``input_required`` result of the tool call
(`workrail_mcp.input_rounds`). The engine decides what to ask and checks every reply
(`workrail_engine.answers.model_loop`); this module only carries the request to the client
and the text back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio.from_thread
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    SamplingCapability,
    SamplingMessage,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from workrail_mcp.client_waits import ClientWaits, client_of

__all__ = ["ClientModel", "SendSampling", "model_of"]

SAMPLING_TIMEOUT_SECONDS = 300.0  # a person may have to approve the request in the client


SendSampling = Callable[[CreateMessageRequest], Awaitable[CreateMessageResult]]
"""Carries one ``sampling/createMessage`` to the client; its result (raises when refused)."""


@dataclass(frozen=True)
class ClientModel:
    send: SendSampling

    async def _ask(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        params = CreateMessageRequestParams(
            messages=[
                SamplingMessage(
                    role="user", content=TextContent(type="text", text=request["prompt"])
                )
            ],
            system_prompt=request["system"],
            max_tokens=int(request["maxTokens"]),
        )
        try:
            result = await self.send(CreateMessageRequest(params=params))
        except Exception:  # the client refused or failed: the agent takes the step
            return None
        content = result.content
        text = content.text if isinstance(content, TextContent) else None
        return {"text": text, "model": result.model} if text else None

    def ask_from_thread(self) -> Callable[[Mapping[str, Any]], dict[str, Any] | None]:
        """The engine's ``ask`` callable, for a tool running on a worker thread."""
        return lambda request: anyio.from_thread.run(partial(self._ask, request))


def model_of(ctx: Any, waits: ClientWaits) -> ClientModel | None:
    """The client's model, if this request's client offers sampling; a wait for its reply counts
    in ``waits`` (past a bound the request is not sent: the agent takes the step)."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or not ctx.session.check_client_capability(
        ClientCapabilities(sampling=SamplingCapability())
    ):
        return None
    session, request_id = ctx.session, ctx.request_id

    async def send(request: CreateMessageRequest) -> CreateMessageResult:
        with waits.waiting(client_of(ctx), "the request for the client's model"):
            result: CreateMessageResult = await session.send_request(
                request,
                CreateMessageResult,
                request_read_timeout_seconds=SAMPLING_TIMEOUT_SECONDS,
                metadata=ServerMessageMetadata(related_request_id=request_id),
            )
        return result

    return ClientModel(send)
