"""The client's model, asked through `sampling/createMessage` (the server's ``--sampling``).

Only when the server was started with ``--sampling`` and the client declared the sampling
capability, on handshake-era connections (2026-07-28 has no server-to-client requests outside the
SDK's input-required round trip, which we do not use yet: see docs/mcp.md). The engine decides
what to ask and checks every reply (`workrail_engine.sessions.model_answers`); this module only
carries the request to the client and the text back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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

__all__ = ["ClientModel", "model_of"]

SAMPLING_TIMEOUT_SECONDS = 300.0  # a person may have to approve the request in the client


@dataclass(frozen=True)
class ClientModel:
    session: Any
    request_id: Any

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
            result = await self.session.send_request(
                CreateMessageRequest(params=params),
                CreateMessageResult,
                request_read_timeout_seconds=SAMPLING_TIMEOUT_SECONDS,
                metadata=ServerMessageMetadata(related_request_id=self.request_id),
            )
        except Exception:  # the client refused or failed: the agent takes the step
            return None
        content = result.content
        text = content.text if isinstance(content, TextContent) else None
        return {"text": text, "model": result.model} if text else None

    def ask_from_thread(self) -> Callable[[Mapping[str, Any]], dict[str, Any] | None]:
        """The engine's ``ask`` callable, for a tool running on a worker thread."""
        return lambda request: anyio.from_thread.run(partial(self._ask, request))


def model_of(ctx: Any) -> ClientModel | None:
    """The client's model, if this request's client offers sampling."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or not ctx.session.check_client_capability(
        ClientCapabilities(sampling=SamplingCapability())
    ):
        return None
    return ClientModel(ctx.session, ctx.request_id)
