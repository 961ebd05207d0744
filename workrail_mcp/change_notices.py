"""Tell clients when the set of workflows changes (their prompt and resource lists follow it).

The catalog bumps ``generation`` when workflow files are added, changed or removed. A watcher
polls it (the catalog itself decides when a re-scan is due) and then:
- on handshake-era connections, sends ``notifications/prompts/list_changed`` and
  ``notifications/resources/list_changed`` on each connection that finished initializing;
- on 2026-07-28 connections, publishes the same events to the subscription bus that serves
  ``subscriptions/listen``.
"""

from __future__ import annotations

import logging
from collections import deque
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
)

if TYPE_CHECKING:
    from workrail_engine.catalog import CatalogProtocol

__all__ = ["ChangeNotices"]

logger = logging.getLogger(__name__)

_MAX_SESSIONS = 1000


class ChangeNotices:
    def __init__(self, catalog: CatalogProtocol, *, poll_seconds: float = 1.0) -> None:
        self.catalog = catalog
        self.poll_seconds = poll_seconds
        self.bus = InMemorySubscriptionBus()
        # Handshake-era sessions; the oldest fall off (a closed HTTP session cannot be told apart).
        self._sessions: deque[Any] = deque(maxlen=_MAX_SESSIONS)

    def add_session(self, session: Any) -> None:
        self._sessions.append(session)

    def _current_generation(self) -> int:
        self.catalog.entries()  # lets the catalog re-scan when it is due
        return int(self.catalog.generation)

    async def _announce(self) -> None:
        await self.bus.publish(PromptsListChanged())
        await self.bus.publish(ResourcesListChanged())
        for session in list(self._sessions):
            try:
                await session.send_prompt_list_changed()
                await session.send_resource_list_changed()
            except Exception:  # a closed connection: stop telling it
                logger.debug("dropping a session that no longer takes notifications", exc_info=True)
                self._sessions.remove(session)

    async def watch(self) -> None:
        # The watcher never makes the first scan (at start-up it would compete with `initialize`,
        # and it would announce a change nobody saw): the first scan a client causes is the baseline.
        seen = self.catalog.generation
        pause = self.poll_seconds
        while True:
            await anyio.sleep(pause)
            if seen == 0:
                seen = self.catalog.generation
                continue
            began = anyio.current_time()
            try:
                current = await anyio.to_thread.run_sync(self._current_generation)
            except Exception:
                logger.exception("catalog re-scan failed")
                continue
            # A re-scan of a huge catalog holds its lock; keep the watcher under ~5% of the time.
            pause = max(self.poll_seconds, 20 * (anyio.current_time() - began))
            if current != seen:
                seen = current
                await self._announce()

    @asynccontextmanager
    async def running(self, _server: Any = None):
        """The server's lifespan: the watcher runs as long as the server does."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.watch)
            try:
                yield {}
            finally:
                group.cancel_scope.cancel()
