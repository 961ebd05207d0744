"""``ClientStream``: the client's stream (stdin), read on a thread of its own.

With the fast start, the server reads its client through this rather than ``sys.stdin.buffer``,
so that what comes before pygls is loaded can be waited for with a deadline
(``first_diagnostics``), and pygls then reads the same bytes through ``readline`` and ``read``. The thread reads the file descriptor
with ``os.read``: a daemon thread blocked inside a ``BufferedReader`` holds its lock, and
Python aborts (SIGABRT) when it closes ``sys.stdin`` at exit.

Only the standard library is imported here: this module runs before anything else.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from typing import Any

from ..message_size import content_length_header

__all__ = ["ClientStream"]

_READ_SIZE = 1 << 16
# Chunks read ahead of the reader: the pipe holds the rest, so a client that sends faster than
# the server reads is held back as before (at most 1 MiB here).
_CHUNKS_AHEAD = 16
_MAX_HEADERS = 1 << 16  # bytes without the blank line that ends a frame's headers


class ClientStream:
    """The client's stream read on a thread of its own, so that the early phase can wait for a
    message with a deadline; pygls then reads the same stream through ``readline`` and ``read``."""

    def __init__(self, fd: int) -> None:
        self._chunks: queue.Queue[bytes] = queue.Queue(maxsize=_CHUNKS_AHEAD)
        self._buffer = bytearray()
        self._ended = False
        threading.Thread(target=self._pump, args=(fd,), daemon=True).start()

    def _pump(self, fd: int) -> None:
        while True:
            try:
                chunk = os.read(fd, _READ_SIZE)
            except OSError:
                chunk = b""
            self._chunks.put(chunk)
            if not chunk:
                return

    def _fill(self, timeout: float | None) -> bool:
        """Wait for more bytes; False at the end of the stream or on timeout."""
        if self._ended:
            return False
        try:
            chunk = self._chunks.get(timeout=timeout)
        except queue.Empty:
            return False
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        return True

    def frame(self, deadline: float, max_length: int) -> tuple[bytes, Any] | None:
        """The next whole message (its bytes and its decoded body) if it arrives by ``deadline``
        and its body is at most ``max_length`` bytes; None otherwise (what was read stays for
        ``readline``/``read``). A body that does not decode comes back as None."""
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0 and len(self._buffer) > _MAX_HEADERS:
                return None
            if end >= 0:
                length = _content_length(bytes(self._buffer[:end]))
                if length is None or length > max_length:
                    return None
                total = end + 4 + length
                if len(self._buffer) >= total:
                    raw = bytes(self._buffer[:total])
                    del self._buffer[:total]
                    try:
                        return raw, json.loads(raw[end + 4 :])
                    except ValueError:
                        return raw, None
            left = deadline - time.monotonic()
            if left <= 0 or not self._fill(left):
                return None

    def readline(self) -> bytes:
        while (end := self._buffer.find(b"\n")) < 0 and self._fill(None):
            pass
        size = end + 1 if end >= 0 else len(self._buffer)
        line = bytes(self._buffer[:size])
        del self._buffer[:size]
        return line

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and self._fill(None):
            pass
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data


def _content_length(headers: bytes) -> int | None:
    for line in headers.split(b"\r\n"):
        if (length := content_length_header(line)) is not None:
            return length
    return None
