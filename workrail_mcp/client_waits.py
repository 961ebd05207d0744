"""Tool calls waiting for their client's reply: how many may wait, and for how long.

A tool call that asks its client something — a person's confirmation (``elicitation/create``),
the client's model (``sampling/createMessage``, ``--sampling``) — waits for the reply on the
worker thread it runs on, and every tool call of the process shares the same worker threads
(anyio's default limiter: 40). A client that leaves its requests unanswered must not hold them
all: at most `MAX_WAITING_CALLS` calls of the process wait at a time, at most
`MAX_WAITING_CALLS_PER_CLIENT` of them for one client (one MCP session), so most worker threads
stay free for everyone else. A request past either bound is not sent: a confirmation is answered
`ClientDidNotReply` at once, the model's step is left to the agent. A confirmation waits at most
`ELICITATION_TIMEOUT_SECONDS`; a reply the server cannot read ends the wait at once (the
transports hand the SDK an error response in its place: `line_screen.failed_response`).

On 2026-07-28 the calls between ``input_required`` rounds count against the same process-wide
bound (that revision has no session to tell clients apart).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from workrail_engine.errors import EngineError

__all__ = [
    "ELICITATION_TIMEOUT_SECONDS",
    "MAX_WAITING_CALLS",
    "MAX_WAITING_CALLS_PER_CLIENT",
    "ClientDidNotReply",
    "ClientWaits",
    "client_of",
]

# Below the 40 worker threads tool calls share: the rest keep serving other clients.
MAX_WAITING_CALLS = 16
# A client that asks for more confirmations at once than a person can give is not one client's
# work; 4 leaves the other 12 to other sessions.
MAX_WAITING_CALLS_PER_CLIENT = 4
# As long as the client's model may take (client_model.SAMPLING_TIMEOUT_SECONDS): a person reads
# the step's notes and decides.
ELICITATION_TIMEOUT_SECONDS = 300.0


def client_of(ctx: Any) -> int:
    """The request's client (its connection: one MCP session), as the bounds count it. The
    initialize params are one object per connection, alive while any of its calls waits."""
    return id(ctx.session.client_params)


class ClientDidNotReply(EngineError):
    """The client was not asked, gave no reply in time, or a reply the server cannot use: the
    step was not confirmed and stays pending."""

    code = -32009
    title = "The client did not reply"


class ClientWaits:
    """The calls of this process now waiting for their client, counted per client and in all
    (touched only on the event loop)."""

    def __init__(self) -> None:
        self._per_client: Counter[Hashable] = Counter()
        self._total = 0

    def refusal(self, client: Hashable | None) -> str | None:
        """Why one more call of ``client`` may not wait now (None: it may). ``client`` None: a
        client without a session, counted in the process-wide bound only."""
        if self._total >= MAX_WAITING_CALLS:
            return (
                f"{self._total} calls of this server already wait for their clients' replies "
                f"(at most {MAX_WAITING_CALLS})"
            )
        if client is not None and self._per_client[client] >= MAX_WAITING_CALLS_PER_CLIENT:
            return (
                f"this client already has {self._per_client[client]} calls waiting for its "
                f"replies (at most {MAX_WAITING_CALLS_PER_CLIENT}): answer or cancel them first"
            )
        return None

    def hold(self, client: Hashable | None) -> None:
        self._total += 1
        if client is not None:
            self._per_client[client] += 1

    def release(self, client: Hashable | None) -> None:
        self._total -= 1
        if client is not None:
            self._per_client[client] -= 1
            if self._per_client[client] <= 0:
                del self._per_client[client]

    @contextmanager
    def waiting(self, client: Hashable | None, asked: str) -> Iterator[None]:
        """One call of ``client`` waiting for its reply to ``asked`` (what was asked, in words);
        `ClientDidNotReply` at once past a bound."""
        refused = self.refusal(client)
        if refused is not None:
            raise ClientDidNotReply(
                f"{asked} was not sent: {refused}; the step stays pending, answer it again later",
                reason="busy",
            )
        self.hold(client)
        try:
            yield
        finally:
            self.release(client)
