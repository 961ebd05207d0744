"""The 2026-07-28 way for a tool call to ask its client something: ``input_required`` rounds.

On 2026-07-28 a server sends no request of its own. A ``tools/call`` that needs the client's
input — the client's model for a step (``--sampling``), a person's confirmation of a step — is
answered with an ``input_required`` result carrying the request, and the client calls again with
its answer and the ``requestState`` it was given (the SDK's client does this by itself, through
the same sampling and elicitation callbacks as on the handshake revisions).

The tool is the same call as on the handshake revisions, run once: on its worker thread, its
``ask`` and ``confirm`` callables wait for the client's answer as they wait for the reply to a
``sampling/createMessage`` there. Here each question ends the current round, and the next round's
answer resumes the waiting call — so the same checks, limits and records apply, by the same code
(`workrail_engine.answers.model_loop`, the confirm callback of `confirmation.Person`).

The calls waiting for their next round are held in this process. The SDK seals ``requestState``
(it binds it to the tool and the arguments of the call, under a key of this process — its
default), so a round comes back to the call that asked, or is refused. The calls that may ask
count against the process-wide bound of calls waiting for their client
(`client_waits.MAX_WAITING_CALLS`: each holds a worker thread) from their first round to their
end (a call beyond asks nothing: it goes on as for a client without the capability), each round
for at most ``ROUND_TIMEOUT_SECONDS``: one not answered in time gets no answer (the model's step
waits for the agent; the confirmation is not given, `ClientDidNotReply`), as a request that fails
on the handshake revisions, and asks nothing more.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
from mcp_types import (
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitationCapability,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    SamplingCapability,
)
from pydantic import BaseModel, ValidationError

from workrail_mcp.client_model import SAMPLING_TIMEOUT_SECONDS, ClientModel
from workrail_mcp.client_waits import ClientDidNotReply, ClientWaits
from workrail_mcp.confirmation import Person, person_named
from workrail_mcp.error_mapping import invalid_params
from workrail_mcp.request_outliving import OutlivesRequests
from workrail_mcp.tools.binding import ClientPeer

__all__ = ["ROUND_TIMEOUT_SECONDS", "InputRounds"]

ROUND_TIMEOUT_SECONDS = SAMPLING_TIMEOUT_SECONDS  # as long as a handshake-era request may take

logger = logging.getLogger(__name__)

# What a tool call runs: the registry's call of the tool with this peer; its wire result.
RunTool = Callable[[ClientPeer], Awaitable[dict[str, Any]]]


class _Question:
    """One request to the client and, once the next round brings it, its answer."""

    def __init__(self, key: str, request: BaseModel, answer_type: type[BaseModel]) -> None:
        self.key, self.request, self.answer_type = key, request, answer_type
        self.answered = anyio.Event()
        self.answer: Any = None

    def wire(self) -> dict[str, Any]:
        return dict(self.request.model_dump(by_alias=True, mode="json", exclude_none=True))

    def take(self, raw: Any) -> None:
        """The client's answer (anything else counts as no answer)."""
        try:
            self.answer = self.answer_type.model_validate(raw) if raw is not None else None
        except ValidationError:
            logger.warning("the client's answer to %s is not a %s", self.key, self.answer_type)
        self.answered.set()


_Outcome = _Question | dict[str, Any] | Exception


class _WaitingCall:
    """A tool call between rounds: its task runs on; its questions come out one at a time."""

    def __init__(self) -> None:
        self.state = ""  # the requestState of the round it waits for
        self._asked = 0
        self._gave_up = False
        self.question: _Question | None = None
        # What the call did and no round has taken yet: a question, its result, or its failure.
        self._outcomes: list[_Outcome] = []
        self._arrived = anyio.Event()

    async def run(self, run_tool: RunTool, peer: ClientPeer) -> None:
        outcome: _Outcome
        try:
            outcome = await run_tool(peer)
        except Exception as error:  # raised to the round that waits for it, as a handler's
            outcome = error
        self._put(outcome)

    def _put(self, outcome: _Outcome) -> None:
        self._outcomes.append(outcome)
        self._arrived.set()

    async def _ask(self, request: BaseModel, answer_type: type[BaseModel]) -> Any:
        if self._gave_up:
            return None
        self._asked += 1
        question = _Question(f"q{self._asked}", request, answer_type)
        self.question = question
        self._put(question)
        with anyio.move_on_after(ROUND_TIMEOUT_SECONDS):
            await question.answered.wait()
        if not question.answered.is_set():
            self._gave_up = True  # the client did not come back: it is asked nothing more
        return question.answer

    async def sample(self, request: CreateMessageRequest) -> CreateMessageResult:
        answer = await self._ask(request, CreateMessageResult)
        if answer is None:
            raise RuntimeError("the client gave no answer")  # ClientModel: the agent takes it
        return answer  # type: ignore[no-any-return]

    async def elicit(self, message: str, schema: dict[str, Any]) -> ElicitResult:
        params = ElicitRequestFormParams(message=message, requested_schema=schema)
        answer = await self._ask(ElicitRequest(params=params), ElicitResult)
        if answer is None:
            why = (
                f"no round answered it within {ROUND_TIMEOUT_SECONDS:g} s"
                if self._gave_up
                else "the round's answer to it is not an elicitation result"
            )
            raise ClientDidNotReply(
                f"the confirmation request (elicitation/create): {why}; the step was not "
                "confirmed and stays pending: answer it again to ask again",
                reason="timeout" if self._gave_up else "unreadable",
            )
        return answer  # type: ignore[no-any-return]

    async def next(self) -> _Question | dict[str, Any]:
        """Wait for the call's next question, or its result (its failure is raised here)."""
        while not self._outcomes:
            self._arrived = anyio.Event()
            await self._arrived.wait()
        outcome = self._outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def _offers(ctx: Any, capability: ClientCapabilities) -> bool:
    try:
        return bool(ctx.session.check_client_capability(capability))
    except Exception:  # no capabilities recorded for this request
        return False


def _client_name(ctx: Any) -> str | None:
    info = getattr(ctx.session.client_params, "client_info", None)
    return getattr(info, "name", None)


class InputRounds(OutlivesRequests):
    """The tool calls of this process waiting for the client's next round (2026-07-28)."""

    def __init__(self, sampling: bool, waits: ClientWaits) -> None:
        """``sampling``: the server was started with ``--sampling``; ``waits``: the process's
        calls waiting for their client, which the calls between rounds count in."""
        self._sampling = sampling
        self._waits = waits
        self._waiting: dict[str, _WaitingCall] = {}

    def _offered(self, ctx: Any) -> tuple[bool, bool]:
        """Whether this request's client may be asked for its model, and for a person."""
        model = self._sampling and _offers(ctx, ClientCapabilities(sampling=SamplingCapability()))
        return model, _offers(ctx, ClientCapabilities(elicitation=ElicitationCapability()))

    async def call(
        self, ctx: Any, params: Mapping[str, Any], run_tool: RunTool
    ) -> dict[str, Any] | None:
        """The round's answer: the tool's result, or an ``input_required`` result; None when the
        call asks nothing of its client (it is then called as usual)."""
        state = params.get("requestState")
        if state is None:
            model, person = self._offered(ctx)
            if not self.serving or self._waits.refusal(None) is not None or not (model or person):
                return None
            call = _WaitingCall()
            peer = ClientPeer(
                person=Person(call.elicit, person_named(_client_name(ctx))) if person else None,
                model=ClientModel(call.sample) if model else None,
            )
            self._waits.hold(None)  # until the call ends (`_run`)
            self.start_soon(self._run, call, run_tool, peer)
        else:
            found = self._waiting.pop(state, None) if isinstance(state, str) else None
            if found is None or found.question is None:
                raise invalid_params(
                    "this call is no longer waiting for the client's input (it timed out, or the "
                    "server restarted): call the tool again without requestState"
                )
            call = found
            responses = params.get("inputResponses")
            key = call.question.key
            call.question.take(responses.get(key) if isinstance(responses, Mapping) else None)
        outcome = await call.next()
        if isinstance(outcome, dict):
            return outcome
        call.state = "rs-" + uuid.uuid4().hex  # each round's state answers that round only
        self._waiting[call.state] = call
        return {
            "resultType": "input_required",
            "inputRequests": {outcome.key: outcome.wire()},
            "requestState": call.state,
        }

    async def _run(self, call: _WaitingCall, run_tool: RunTool, peer: ClientPeer) -> None:
        try:
            await call.run(run_tool, peer)
        finally:
            self._waits.release(None)
            self._waiting.pop(call.state, None)  # one its client left: nobody comes for it
