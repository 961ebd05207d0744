"""kept_open: a module fixture's client entered in one task and left in another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from tests.mcp.shared_server import kept_open


@asynccontextmanager
async def task_group_context(events: list[str]) -> AsyncIterator[str]:
    """Like the SDK's client: an anyio task group, which must be left in the task that entered
    it (else RuntimeError)."""
    async with anyio.create_task_group() as group:
        events.append("entered")
        yield "the client"
        group.cancel_scope.cancel()
    events.append("left")


async def test_entered_in_one_task_and_left_from_another():
    events: list[str] = []
    held = kept_open(lambda: task_group_context(events))
    value = await asyncio.create_task(held.__aenter__())  # a fixture's set-up
    assert value == "the client" and events == ["entered"]
    await asyncio.create_task(held.__aexit__(None, None, None))  # its tear-down
    assert events == ["entered", "left"]


async def test_without_it_the_same_use_fails():
    """What kept_open is for: the plain context used the same way is refused by anyio."""
    plain = task_group_context([])
    await asyncio.create_task(plain.__aenter__())
    with pytest.raises(RuntimeError, match="different task"):
        await asyncio.create_task(plain.__aexit__(None, None, None))


async def test_a_failure_to_enter_reaches_the_caller():
    @asynccontextmanager
    async def refuses() -> AsyncIterator[None]:
        raise ConnectionError("the server did not start")
        yield

    with pytest.raises(ConnectionError, match="did not start"):
        async with kept_open(refuses):
            pass
