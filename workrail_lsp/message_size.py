"""The client's stream as pygls reads it: any frame whose body is over ``MAX_MESSAGE_BYTES`` skipped.

pygls is given this whether or not the fast start (``fast_start``) read the first messages, so
the limit holds for every message the server reads, the first one too.

Only the standard library is imported here: the server's start-up reads it before pygls.
"""

from __future__ import annotations

import logging
from typing import Protocol

__all__ = ["MAX_MESSAGE_BYTES", "SizeLimitedStream", "content_length_header"]

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""The largest message body the server reads (its ``Content-Length``).

pygls allocates a buffer of whatever size a frame declares: ``Content-Length: 60000000000`` ended
the process with MemoryError. The largest message a real client sends is a document's whole
text, and a document is refused past 5 MiB anyway (``limits.MAX_DOCUMENT_BYTES``); even written
with every character escaped as ``\\u00XX`` (6 bytes each) that text fits in 30 MiB. A larger
frame is read and thrown away in 1 MiB pieces (the stream stays in step with the client, and the
server keeps serving the other documents) and the refusal is logged on stderr.
"""
_DISCARD_CHUNK = 1 << 20


class LineReader(Protocol):
    """What pygls reads its client through: ``readline`` and ``read``."""

    def readline(self) -> bytes: ...

    def read(self, size: int) -> bytes: ...


def content_length_header(line: bytes) -> int | None:
    """The length a ``Content-Length`` header line gives; None for another line or a bad value."""
    name, _, value = line.partition(b":")
    if name.strip().lower() != b"content-length":
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


class SizeLimitedStream:
    """stdin for pygls: ``stream`` as it comes, but a frame whose body is over ``max_message``
    bytes is skipped (pygls never sees it)."""

    def __init__(self, stream: LineReader, max_message: int = MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self._max_message = max_message

    def readline(self) -> bytes:
        while True:
            line = self._stream.readline()
            length = content_length_header(line)
            if length is None or length <= self._max_message:
                return line
            self._skip_frame(length)

    def read(self, size: int) -> bytes:
        return self._stream.read(size)

    def _skip_frame(self, length: int) -> None:
        """Throw away the rest of a frame's headers and its body, never holding more than
        ``_DISCARD_CHUNK`` bytes (a client that declares more than it sends is waited for until
        it closes the stream, as for any frame)."""
        while (line := self._stream.readline()).strip():
            pass
        log.warning(
            "refused a message of %s bytes (the limit is %s bytes, MAX_MESSAGE_BYTES); "
            "its body is skipped and the server goes on serving",
            f"{length:,}",
            f"{self._max_message:,}",
        )
        left = length if line else 0
        while left > 0:
            chunk = self._stream.read(min(left, _DISCARD_CHUNK))
            if not chunk:
                return
            left -= len(chunk)
