"""The session admission in front of the SDK's Streamable HTTP app, driven in process.

The real server is tested over HTTP in test_http_hostile.py; what is pinned here is an order of
events a loaded machine produced there only now and then (an opening whose answer was under way
while another client opened one), which a stand-in for the SDK's app can hold still."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from workrail_mcp import http_sessions
from workrail_mcp.http_sessions import SessionAdmission


class HeldOpenings:
    """Stands in for the SDK's app: an opening POST answers with a new session id, then keeps
    its answer open until `release` is set for that id; a DELETE closes the session."""

    def __init__(self) -> None:
        self.opened = 0
        self.deleted: list[str] = []
        self.hold: dict[str, anyio.Event] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["method"] == "DELETE":
            await anyio.sleep(0.05)  # the SDK's closing of a session takes a while
            self.deleted.append(dict(scope["headers"])[b"mcp-session-id"].decode())
            return await send({"type": "http.response.start", "status": 200, "headers": []})
        self.opened += 1
        session = f"s{self.opened}"
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"mcp-session-id", session.encode())],
            }
        )
        if session in self.hold:
            await self.hold[session].wait()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def opening(address: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"host", b"127.0.0.1:1")],
        "client": (address, 40000),
    }


async def open_session(admission: SessionAdmission, address: str) -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        return None

    await admission(opening(address), receive, send)


@pytest.mark.asyncio
async def test_an_opening_whose_answer_is_still_going_is_counted_once(monkeypatch):
    """It used to count as held and as opening until its request ended, so a full server seen
    meanwhile evicted one session more than the limit needs (998 of 999 alive, under load)."""
    monkeypatch.setattr(http_sessions, "MAX_SESSIONS", 3)
    app = HeldOpenings()
    admission = SessionAdmission(app, "/mcp")
    await open_session(admission, "10.0.0.1")  # s1, ended
    app.hold["s2"] = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(open_session, admission, "10.0.0.1")  # s2: answer under way
        while "s2" not in admission.sessions:
            await anyio.sleep(0)
        await open_session(admission, "10.0.0.2")  # s3: the third of three
        app.hold["s2"].set()
    assert sorted(admission.sessions) == ["s1", "s2", "s3"]
    assert app.deleted == []
    await open_session(admission, "10.0.0.3")  # the fourth: the largest holder's oldest goes
    assert app.deleted == ["s1"]
    assert sorted(admission.sessions) == ["s2", "s3", "s4"]


@pytest.mark.asyncio
async def test_two_openings_meeting_at_the_last_place_take_it_once(monkeypatch):
    """An opening counts from before it makes room: one arriving while another's eviction is
    under way sees it, so the server never holds more than its limit."""
    monkeypatch.setattr(http_sessions, "MAX_SESSIONS", 2)
    app = HeldOpenings()
    admission = SessionAdmission(app, "/mcp")
    await open_session(admission, "10.0.0.1")
    await open_session(admission, "10.0.0.1")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(open_session, admission, "10.0.0.2")  # evicts: its DELETE takes 50 ms
        while len(admission.sessions) == 2:  # until it has taken its candidate out
            await anyio.sleep(0)
        await open_session(admission, "10.0.0.3")
    assert len(admission.sessions) == 2, sorted(admission.sessions)
