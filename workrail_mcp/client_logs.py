"""`logging/setLevel`: the server's log records as `notifications/message`, at the client's level.

Handshake-era revisions (2024-11-05 … 2025-11-25) have the logging capability: a client sets a
level with ``logging/setLevel`` and from then on gets every record of the ``workrail_mcp`` and
``workrail_engine`` loggers at that level or above (an invalid workflow file left out of the
catalog, a run recovered, a request that failed). 2026-07-28 deprecates it (no handshake, no
connection to remember a level for); there the method is not served (−32601).

Records come from any thread (catalog scans and runs work on worker threads); the handler only
queues them onto the event loop, and one task there sends them, so logging never blocks on a slow
client. A full queue drops records rather than grow without bound; stderr keeps its own copy.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp_types import LoggingMessageNotification, LoggingMessageNotificationParams

from workrail_mcp.error_mapping import invalid_params

__all__ = ["FORWARDED_LOGGERS", "LEVELS", "ClientLogs"]

# The protocol's levels (RFC 5424's, least severe first) and the Python level each starts at.
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 10,
    "emergency": logging.CRITICAL + 20,
}
FORWARDED_LOGGERS = ("workrail_mcp", "workrail_engine")
_QUEUE_SIZE = 1000
_MAX_CONNECTIONS = 1000

logger = logging.getLogger(__name__)


def _protocol_level(levelno: int) -> str:
    named = "debug"
    for name, threshold in LEVELS.items():
        if levelno >= threshold:
            named = name
    return named


class _Listener:
    """One connection that asked for log messages: its session and its threshold."""

    def __init__(self, session: Any, threshold: int) -> None:
        self.session = session
        self.threshold = threshold
        # The client's initialize params are one object per connection: they tell connections apart.
        self.connection_key = id(session.client_params)


class _QueueHandler(logging.Handler):
    def __init__(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Any]) -> None:
        super().__init__(logging.NOTSET)
        self.loop = loop
        self.queue = queue

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == __name__:  # our own troubles must not feed back into the queue
            return
        try:
            item = (record.levelno, record.name, self.format(record))
            self.loop.call_soon_threadsafe(self._put, item)
        except RuntimeError:  # the loop has closed: the server is stopping
            pass

    def _put(self, item: Any) -> None:
        if not self.queue.full():
            self.queue.put_nowait(item)


class ClientLogs:
    def __init__(self) -> None:
        self._listeners: deque[_Listener] = deque(maxlen=_MAX_CONNECTIONS)

    def set_level(self, ctx: Any, params: Any) -> dict[str, Any]:
        """Answer ``logging/setLevel``: remember the level for this connection."""
        level = params.get("level") if isinstance(params, dict) else None
        if not isinstance(level, str) or level not in LEVELS:  # a list or object is no key
            raise invalid_params(f"level must be one of {', '.join(LEVELS)} (got {level!r})")
        listener = _Listener(ctx.session, LEVELS[level])
        for old in [
            old for old in self._listeners if old.connection_key == listener.connection_key
        ]:
            self._listeners.remove(old)
        self._listeners.append(listener)
        self._lower_logger_levels()
        return {}

    def _lower_logger_levels(self) -> None:
        """Records below a logger's level are never made; let through what some client wants."""
        wanted = min(listener.threshold for listener in self._listeners)
        for name in FORWARDED_LOGGERS:
            named = logging.getLogger(name)
            if named.getEffectiveLevel() > wanted:
                named.setLevel(wanted)

    async def _send(self, levelno: int, name: str, message: str) -> None:
        for listener in list(self._listeners):
            if levelno < listener.threshold:
                continue
            try:
                # The notification itself, not the session's deprecated helper (which warns).
                params = LoggingMessageNotificationParams(
                    level=_protocol_level(levelno), data=message, logger=name
                )
                await listener.session.send_notification(LoggingMessageNotification(params=params))
            except Exception:  # a closed connection: stop telling it
                logger.debug(
                    "dropping a connection that no longer takes log messages", exc_info=True
                )
                self._listeners.remove(listener)

    @asynccontextmanager
    async def forwarding(self) -> AsyncIterator[None]:
        """While the server runs, records of our loggers go to the listening clients."""
        queue: asyncio.Queue[Any] = asyncio.Queue(_QUEUE_SIZE)
        handler = _QueueHandler(asyncio.get_running_loop(), queue)

        async def drain() -> None:
            while True:
                await self._send(*await queue.get())

        task = asyncio.ensure_future(drain())
        for name in FORWARDED_LOGGERS:
            logging.getLogger(name).addHandler(handler)
        try:
            yield
        finally:
            for name in FORWARDED_LOGGERS:
                logging.getLogger(name).removeHandler(handler)
            task.cancel()
