"""Work a request starts that outlives it, not the server (a task's run, a call between rounds)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

__all__ = ["OutlivesRequests"]


class OutlivesRequests:
    """A task group held for the server's lifespan (`running`); `start_soon` starts work in it."""

    _group: anyio.abc.TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    @property
    def serving(self) -> bool:
        """Whether the server's lifespan runs (work can be started)."""
        return self._group is not None

    def start_soon(self, work: Callable[..., Awaitable[Any]], *args: Any) -> None:
        if self._group is None:
            raise RuntimeError("the server's lifespan has not started")
        self._group.start_soon(work, *args)
