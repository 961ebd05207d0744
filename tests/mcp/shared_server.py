"""One real server process for several tests of a module.

Each start of ``workrail-mcp`` costs about 1.4 s of CPU (mostly importing the MCP SDK), and
the suite is CPU-bound on its 2-core machine (docs/benchmarks.md, The test suite), so tests that
need no fresh process of their own share one: a module-scoped fixture opens the client once and
every test of the module talks to the same process over the same transport.

The SDK's client is an anyio task group, which must be left in the task that entered it; a
module fixture's set-up and tear-down run in different tasks, so :func:`kept_open` enters the
client in a task of its own and leaves it there when the fixture ends. The tests of such a
module share the module's event loop (``pytest.mark.asyncio(loop_scope="module")``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypeVar

__all__ = ["kept_open"]

T = TypeVar("T")


@asynccontextmanager
async def kept_open(open_: Callable[[], AbstractAsyncContextManager[T]]) -> AsyncIterator[T]:
    """``open_()`` entered and left in one task of its own; yields what it gave."""
    entered: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    leave = asyncio.Event()

    async def hold() -> None:
        try:
            async with open_() as value:
                entered.set_result(value)
                await leave.wait()
        except BaseException as failure:
            if not entered.done():
                entered.set_exception(failure)
            raise

    holder = asyncio.create_task(hold())
    try:
        yield await entered
    finally:
        leave.set()
        await holder
