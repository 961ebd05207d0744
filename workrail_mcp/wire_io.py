"""The stdio wire's bytes, read and written on the event loop where the descriptor allows it.

A request line costs a worker thread to read it and another to write its answer when each
read and write is handed to a thread; each hop there and back (the thread's wake-up, the loop's
wake-up, anyio's bookkeeping) costs more CPU than the read or write itself. A pipe or a socket
can instead be waited on by the loop's selector and then read or written without blocking:

- read: the descriptor is read only once the selector says it is readable, so `os.read`
  returns what is there at once (this process is the only reader of its private duplicate);
- write: `pwritev` with ``RWF_NOWAIT`` writes what fits and never blocks, and the rest waits
  for the selector to say the pipe has room.

The descriptor's own flags are left alone: ``O_NONBLOCK`` is a property of the open file
description, shared with every process holding the same pipe (the client, a parent shell).
Anything else — a regular file, a terminal, a buffered stream, a kernel that refuses
``RWF_NOWAIT`` on a pipe (before Linux 6.x; the call fails rather than blocks) — is read and
written on a worker thread, as the SDK's own transport does.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import sys
from typing import Any, BinaryIO

import anyio
import anyio.to_thread

__all__ = ["MAX_LINE_BYTES", "TOO_LONG", "LineReader", "WireWriter"]

MAX_LINE_BYTES = 16 * 1024 * 1024
TOO_LONG = b"\0 too long"  # compared by identity
_CHUNK = 65536
# What pwritev2 answers when it cannot honour RWF_NOWAIT on this descriptor (kernel, file type).
_NOWAIT_REFUSED = (errno.EOPNOTSUPP, errno.EINVAL, errno.ESPIPE, errno.ENOSYS)


def _selectable_fd(stream: Any) -> int | None:
    """The raw descriptor of an unbuffered pipe or socket stream; None for anything else.

    A buffered stream may already hold bytes the descriptor no longer has; a regular file or a
    terminal is not one the loop's selector waits on for us (epoll refuses files). Windows'
    default event loop has no selector to wait on descriptors with.
    """
    if sys.platform == "win32" or not isinstance(stream, io.FileIO):
        return None
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return None
    return stream.fileno() if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None


class LineReader:
    """Reads lines of at most `MAX_LINE_BYTES`; a longer line is skipped and reported."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.eof = False
        self._fd = _selectable_fd(stream)

    async def _fill(self) -> None:
        if self._fd is None:
            chunk = await anyio.to_thread.run_sync(self.stream.read, _CHUNK)
        else:
            await anyio.wait_readable(self._fd)
            chunk = os.read(self._fd, _CHUNK)
        if not chunk:
            self.eof = True
        self.buffer += chunk

    async def read_line(self) -> bytes | None:
        """The next line, `TOO_LONG` for an over-long one, None at end of input.

        A line already in the buffer is returned without any I/O (a client may send several).
        """
        too_long = False
        searched = 0  # bytes already known to hold no newline: a long line is scanned once
        while True:
            newline = self.buffer.find(b"\n", searched)
            searched = len(self.buffer)
            if newline >= 0:
                line = bytes(self.buffer[:newline])
                del self.buffer[: newline + 1]
                return TOO_LONG if too_long or len(line) > MAX_LINE_BYTES else line
            if len(self.buffer) > MAX_LINE_BYTES:
                too_long = True
                self.buffer.clear()
                searched = 0
            if self.eof:
                if too_long:
                    return TOO_LONG
                if not self.buffer:
                    return None
                line, self.buffer = bytes(self.buffer), bytearray()
                return line
            await self._fill()


class WireWriter:
    """Writes whole lines, one at a time, to the wire."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.lock = anyio.Lock()
        self._fd = _selectable_fd(stream) if hasattr(os, "RWF_NOWAIT") else None

    def _write_all(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            written = self.stream.write(view)
            view = view[written or 0 :]

    async def _write_on_loop(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.pwritev(fd, [view], -1, os.RWF_NOWAIT)
            except BlockingIOError:
                await anyio.wait_writable(fd)
                continue
            except OSError as error:
                if error.errno not in _NOWAIT_REFUSED:
                    raise
                self._fd = None  # this descriptor cannot: a worker thread from now on
                await anyio.to_thread.run_sync(self._write_all, view)
                return
            view = view[written:]

    async def write_line(self, line: bytes) -> None:
        """``line`` and a newline, whole, before any other line is started.

        Shielded from cancellation, as a write on a worker thread is: half a line would
        corrupt every message after it.
        """
        async with self.lock:
            with anyio.CancelScope(shield=True):
                if self._fd is not None:
                    await self._write_on_loop(self._fd, line + b"\n")
                else:
                    await anyio.to_thread.run_sync(self._write_all, line + b"\n")
