"""A step's confirmation asked of the person through `elicitation/create` (a form).

When a session's or a run's waiting step needs a person's confirmation (``requireConfirmation`` true or
``human_approval``) and the client declared the elicitation capability, the answer that would
move past it is first put to the person: approve, or reject with a comment. The engine decides
when to ask (after the answer's checks, never for a replay) and records the reply; this module
only carries the question to the client and the reply back.

On the handshake revisions (2025-06-18 onwards have elicitation) the form goes to the client as
a request of the server's (`person_of`); on 2026-07-28, where a server sends no request of its
own, it rides an ``input_required`` result of the tool call (`workrail_mcp.input_rounds`).

A request the client leaves unanswered for `client_waits.ELICITATION_TIMEOUT_SECONDS`, answers
with an error or with a reply the server cannot read, or that the waiting bounds keep from being
sent (`client_waits.ClientWaits`), answers the tool call `ClientDidNotReply`: the step was not
confirmed and stays pending, and nothing is recorded as the person's reply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio.from_thread
from mcp import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    REQUEST_TIMEOUT,
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from workrail_mcp.client_waits import (
    ELICITATION_TIMEOUT_SECONDS,
    ClientDidNotReply,
    ClientWaits,
    client_of,
)

__all__ = ["FORM", "AskPerson", "Person", "person_named", "person_of"]

MAX_COMMENT_CHARS = 2000  # what the form lets the person write
MAX_NOTES_CHARS = 4000  # of the agent's notes shown in the form
MAX_CLIENT_NAME_CHARS = 200  # of the client's name, in who replied

AskPerson = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Sends one form to the person (message, requested schema); returns the client's `ElicitResult`."""

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Decision",
            "description": "approve: the step is done and the workflow moves on; reject: the "
            "agent must do it again (say why in the comment).",
            "enum": ["approve", "reject"],
        },
        "comment": {
            "type": "string",
            "title": "Comment",
            "description": "Optional: what the agent should know (why you reject, what to change).",
            "maxLength": MAX_COMMENT_CHARS,
        },
    },
    "required": ["decision"],
}


@dataclass(frozen=True)
class Person:
    """The person behind a request's client: how to ask them, and the words that name them."""

    ask: AskPerson
    by: str

    def confirm_from_thread(self) -> Callable[[Mapping[str, Any]], dict[str, Any] | None]:
        """The engine's ``confirm`` callable, for a tool running on a worker thread."""

        def confirm(step: Mapping[str, Any]) -> dict[str, Any] | None:
            result = anyio.from_thread.run(partial(self.ask, _message(step), FORM))
            if result.action != "accept":
                action = "declined" if result.action == "decline" else "cancelled"
                return {"action": action, "by": self.by}
            content = result.content or {}
            decision = content.get("decision")
            comment = content.get("comment")
            return {
                "action": decision if decision in ("approve", "reject") else "declined",
                # The form asks for at most this much; a client that sends more is cut to it
                # (the reply is stored with the step).
                "comment": comment[:MAX_COMMENT_CHARS] if isinstance(comment, str) else None,
                "by": self.by,
            }

        return confirm


_ASKED = "the confirmation request (elicitation/create)"


def person_of(ctx: Any, waits: ClientWaits) -> Person | None:
    """Who can be asked through this request's client, if anyone; a wait for their reply counts
    in ``waits``."""
    session = ctx.session
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or not session.check_client_capability(
        ClientCapabilities(elicitation=ElicitationCapability())
    ):
        return None
    request = partial(
        session.send_request,
        result_type=ElicitResult,
        request_read_timeout_seconds=ELICITATION_TIMEOUT_SECONDS,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )

    async def ask(message: str, schema: dict[str, Any]) -> Any:
        params = ElicitRequestFormParams(message=message, requested_schema=schema)
        with waits.waiting(client_of(ctx), _ASKED):
            try:
                return await request(ElicitRequest(params=params))
            except MCPError as error:
                raise _no_reply(error) from None
            except ValidationError:
                raise ClientDidNotReply(
                    f"the client's reply to {_ASKED} is not an elicitation result; the step "
                    "was not confirmed and stays pending: answer it again to ask again",
                    reason="unreadable",
                ) from None

    info = getattr(session.client_params, "client_info", None)
    return Person(ask, person_named(getattr(info, "name", None)))


def _no_reply(error: MCPError) -> ClientDidNotReply:
    if error.error.code == REQUEST_TIMEOUT:
        return ClientDidNotReply(
            f"the client did not reply to {_ASKED} within {ELICITATION_TIMEOUT_SECONDS:g} s; the "
            "step was not confirmed and stays pending: answer it again to ask again",
            reason="timeout",
        )
    return ClientDidNotReply(
        f"the client answered {_ASKED} with an error, or with a reply the server cannot read "
        f"({error.error.message}); the step was not confirmed and stays pending: answer it "
        "again to ask again",
        reason="failed",
    )


def person_named(client_name: Any) -> str:
    """The words a confirmation records for who gave it (the client's name, cut to its bound:
    the client's own words, stored with each reply)."""
    if isinstance(client_name, str) and client_name:
        return f"the user of {client_name[:MAX_CLIENT_NAME_CHARS]}"
    return "the user"


def _message(step: Mapping[str, Any]) -> str:
    notes = str(step.get("notes") or "(no notes)")
    if len(notes) > MAX_NOTES_CHARS:
        notes = notes[:MAX_NOTES_CHARS] + " …"
    return (
        f'Confirm the step "{step["title"]}" ({step["stepId"]}) before the workflow moves on.\n\n'
        f"The agent's notes:\n{notes}"
    )
