"""Admission of MCP sessions and event streams over HTTP, per client address.

The SDK keeps up to 10,000 sessions for 30 idle minutes each and refuses every new one past
that with 503: one anonymous client that sent 10,000 ``initialize`` requests (26 s) locked every
other client out for half an hour, and 1,017 held-open GET event streams used up the process's
descriptors the same way. Here each client address (`web.client_key`: an IPv6 client by its
/64) may hold `MAX_SESSIONS_PER_CLIENT` sessions and `MAX_STREAMS_PER_CLIENT`
event streams, and the server `MAX_SESSIONS` and `MAX_STREAMS` in all. A client past its own
share loses its least recently used session that has no request in flight; when the server is
full, the client holding the most loses one the same way — so there is always room for a new
client, and a flood evicts only the flooder's own sessions. Sessions expire after
`SESSION_IDLE_SECONDS` without a request (the SDK closes them; the table here forgets them).

A session is closed the way a client closes it: a ``DELETE`` with its id, sent to the SDK's app
in-process, which ends the session and its event stream.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from workrail_mcp.web import client_key

__all__ = [
    "MAX_SESSIONS",
    "MAX_SESSIONS_PER_CLIENT",
    "MAX_STREAMS",
    "MAX_STREAMS_PER_CLIENT",
    "SESSION_IDLE_SECONDS",
    "SessionAdmission",
]

MAX_SESSIONS = 1000
MAX_SESSIONS_PER_CLIENT = 32
# below the common 1,024-descriptor limit with room for connections, files and the run store
MAX_STREAMS = 256
MAX_STREAMS_PER_CLIENT = 8
SESSION_IDLE_SECONDS = 600.0

_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"


@dataclass
class _Session:
    client: str
    host: bytes  # the Host header it was opened with: the closing DELETE passes the same check
    last_active: float
    in_flight: int = 0  # requests other than the event stream
    stream_since: float | None = None  # when its open GET event stream began


def _header(scope: Any, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value)
    return None


async def _answer(send: Any, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", b"10"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SessionAdmission:
    """ASGI, in front of the SDK's Streamable HTTP app (see the module's docstring)."""

    def __init__(self, app: Any, path: str) -> None:
        self.app = app
        self.path = path
        self.sessions: dict[str, _Session] = {}
        self._opening: dict[str, int] = {}  # admitted sessions whose opening request is running

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is None:
            version = _header(scope, _VERSION_HEADER)
            stateless = version is not None and version.decode("latin-1") not in (
                HANDSHAKE_PROTOCOL_VERSIONS
            )
            if scope.get("method") != "POST" or stateless:
                return await self.app(scope, receive, send)
            return await self._open(scope, receive, send)
        session = self.sessions.get(session_id.decode("latin-1"))
        if session is None:
            return await self.app(scope, receive, send)  # unknown or gone: the SDK says 404
        return await self._within(session_id.decode("latin-1"), session, scope, receive, send)

    # -- opening a session ------------------------------------------------------------------

    async def _open(self, scope: Any, receive: Any, send: Any) -> None:
        client = client_key(scope)
        self._forget_expired()
        # Counted as opening before room is made: an eviction awaits the SDK, and another opening
        # arriving meanwhile must see this one, or both would take the last place.
        self._opening[client] = self._opening.get(client, 0) + 1
        opened: list[str] = []

        def stop_opening() -> None:
            self._opening[client] -= 1
            if not self._opening[client]:
                del self._opening[client]

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                found = dict(message.get("headers") or ()).get(_SESSION_HEADER)
                if found:
                    opened.append(found.decode("latin-1"))
                    # held from here on, so no longer opening: counted twice until the request
                    # ended, it made another opening evict one session too many
                    stop_opening()
                    self.sessions[opened[0]] = _Session(
                        client, _header(scope, b"host") or b"", time.monotonic(), in_flight=1
                    )
            await send(message)

        try:
            refusal = await self._make_room(client)
            if refusal is not None:
                return await _answer(send, *refusal)
            await self.app(scope, receive, watch)
        finally:
            if not opened:
                stop_opening()
            elif opened[0] in self.sessions:
                self._finished(self.sessions[opened[0]])

    def _count(self, client: str | None = None) -> int:
        held = sum(1 for s in self.sessions.values() if client is None or s.client == client)
        opening = sum(self._opening.values()) if client is None else self._opening.get(client, 0)
        return held + opening

    async def _make_room(self, client: str) -> tuple[int, str] | None:
        """Evict one session if the client, or the server, is past its limit with the opening
        asking (counted among the opening ones); a refusal when none can go (every candidate
        has a request in flight)."""
        if self._count(client) > MAX_SESSIONS_PER_CLIENT:
            if not await self._evict(self._least_recent(client)):
                return 429, "too many sessions from this address are busy; try again later"
        elif self._count() > MAX_SESSIONS:
            if not await self._evict(self._least_recent(self._largest_holder())):
                return 503, "too many open sessions; try again later"
        return None

    def _largest_holder(self) -> str | None:
        """The address holding the most sessions (None while all are still opening)."""
        counts: dict[str, int] = {}
        for session in self.sessions.values():
            counts[session.client] = counts.get(session.client, 0) + 1
        return max(counts, key=counts.__getitem__) if counts else None

    def _least_recent(self, client: str | None) -> str | None:
        idle = [
            (s.last_active, sid)
            for sid, s in self.sessions.items()
            if s.client == client and not s.in_flight
        ]
        return min(idle)[1] if idle else None

    def _forget_expired(self) -> None:
        """Sessions the SDK has closed for idleness (no request, no stream, for the idle time)."""
        cutoff = time.monotonic() - SESSION_IDLE_SECONDS
        for sid, session in list(self.sessions.items()):
            if not session.in_flight and session.stream_since is None:
                if session.last_active < cutoff:
                    del self.sessions[sid]

    async def _evict(self, session_id: str | None) -> bool:
        """Close a session (and its event stream) as its client would: DELETE with its id."""
        if session_id is None:
            return False
        session = self.sessions.pop(session_id)
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": self.path,
            "raw_path": self.path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [(b"host", session.host), (_SESSION_HEADER, session_id.encode())],
            "client": None,
            "server": None,
        }

        async def receive() -> Any:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Any) -> None:
            return None

        with anyio.CancelScope(shield=True):
            await self.app(scope, receive, discard)
        return True

    # -- requests within a session ----------------------------------------------------------

    async def _within(
        self, session_id: str, session: _Session, scope: Any, receive: Any, send: Any
    ) -> None:
        stream = scope.get("method") == "GET" and session.stream_since is None
        if stream:
            refusal = await self._stream_room(session.client)
            if refusal is not None:
                return await _answer(send, *refusal)
            session.stream_since = time.monotonic()
        else:
            session.in_flight += 1
        status: list[int] = []

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if stream:
                session.stream_since = None
                session.last_active = time.monotonic()
            else:
                self._finished(session)
            gone = status and (
                status[0] == 404 or (scope.get("method") == "DELETE" and status[0] < 300)
            )
            if gone and self.sessions.get(session_id) is session:
                del self.sessions[session_id]

    @staticmethod
    def _finished(session: _Session) -> None:
        session.in_flight -= 1
        session.last_active = time.monotonic()

    def _streams(self, client: str | None = None) -> list[tuple[float, str]]:
        return [
            (s.stream_since, sid)
            for sid, s in self.sessions.items()
            if s.stream_since is not None and (client is None or s.client == client)
        ]

    async def _stream_room(self, client: str) -> tuple[int, str] | None:
        if len(self._streams(client)) >= MAX_STREAMS_PER_CLIENT:
            return 429, "too many event streams from this address"
        if len(self._streams()) >= MAX_STREAMS:
            counts: dict[str, int] = {}
            for session in self.sessions.values():
                if session.stream_since is not None:
                    counts[session.client] = counts.get(session.client, 0) + 1
            holder = max(counts, key=counts.__getitem__)
            oldest = min(self._streams(holder))[1]
            await self._evict(oldest)
        return None
