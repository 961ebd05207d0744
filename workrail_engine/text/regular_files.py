"""Reading a file that may be anything: only regular files are read, and never past a limit.

A path can name a FIFO (opening it blocks until some writer appears), a device (``/dev/zero``
never ends), a directory, or a symlink to any of those. Every front end that reads a workflow
file from disk (the CLI, the catalog behind the MCP server, the language server's unopened files)
reads it here, so none of them can hang on open or read a file without end:

- the file is opened with ``O_NONBLOCK`` (a FIFO's open returns at once instead of waiting for a
  writer) and ``O_NOCTTY``, then checked with ``fstat`` on the descriptor, so a path swapped
  between a check and the open cannot slip through;
- anything but a regular file is refused;
- at most ``max_bytes + 1`` bytes are read, whatever the size ``fstat`` claimed (files in
  ``/proc`` say 0 and a growing file says less than it holds).

Standard input (``workrail validate -``, ``format -``, ``continue --output @-``) is whatever the
shell connected, a pipe or ``/dev/zero`` alike: `read_stream` reads it under the same cap.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from ..limits import MAX_DOCUMENT_BYTES

__all__ = [
    "FileTooLarge",
    "NotRegularFile",
    "UnreadableFile",
    "read_head",
    "read_regular_file",
    "read_stream",
]

_CHUNK = 1 << 20
_PROBE = 1 << 12  # what a read that should find the end asks for


class UnreadableFile(Exception):
    """The file cannot be read; the message is one sentence for the author."""


class NotRegularFile(UnreadableFile):
    """A directory, FIFO, socket or device: not something a workflow is read from."""


class FileTooLarge(UnreadableFile):
    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size  # what was found: at least max_bytes + 1


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_regular(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise NotRegularFile("This is a directory, not a regular file: not read") from None
    except OSError as err:
        raise UnreadableFile(f"Cannot read the file: {err.strerror or err}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotRegularFile(f"This is {_kind(info.st_mode)}, not a regular file: not read")
    return fd, info


def read_regular_file(path: str | os.PathLike[str], max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; raises `UnreadableFile` otherwise."""
    fd, info = _open_regular(path)
    try:
        if info.st_size > max_bytes:
            raise FileTooLarge(_too_large(info.st_size, max_bytes), info.st_size)
        chunks: list[bytes] = []
        total = 0
        # The size fstat gave and one byte more, then a small read for the end: os.read makes a
        # buffer of the size asked for, and 1 MB ones for 7 KB files were a third of the time.
        request = min(info.st_size, max_bytes) + 1
        while total <= max_bytes:
            chunk = os.read(fd, min(request, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            # All that was asked for: the file grew since fstat (or says size 0), read on.
            request = _CHUNK if len(chunk) == request else _PROBE
        if total > max_bytes:
            raise FileTooLarge(_too_large(total, max_bytes, at_least=True), total)
        return b"".join(chunks)
    except OSError as err:
        raise UnreadableFile(f"Cannot read the file: {err.strerror or err}") from None
    finally:
        os.close(fd)


def read_stream(stream: BinaryIO, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of an open stream (standard input) up to its end, at most ``max_bytes``;
    `FileTooLarge` when there are more (then ``max_bytes + 1`` were read, never the rest)."""
    try:
        data = stream.read(max_bytes + 1)
    except OSError as err:
        raise UnreadableFile(f"Cannot read the input: {err.strerror or err}") from None
    if len(data) > max_bytes:
        raise FileTooLarge(_too_large(len(data), max_bytes, at_least=True), len(data))
    return data


def _too_large(size: int, limit: int, at_least: bool = False) -> str:
    more = "more than " if at_least else ""
    return (
        f"File too large ({more}{size / 1_048_576:.1f} MiB; the limit is {limit / 1_048_576:g} MiB)"
    )


def read_head(path: str | os.PathLike[str], size: int) -> bytes:
    """The first ``size`` bytes of a regular file; b"" for anything else or an unreadable file."""
    try:
        fd, _ = _open_regular(path)
    except UnreadableFile:
        return b""
    try:
        return os.read(fd, size)
    except OSError:
        return b""
    finally:
        os.close(fd)
