"""Timestamps per phase of the server's work, written as JSON lines when ``WORKRAIL_LSP_TRACE``
names a file; off by default (then ``span`` is a shared no-op context).

Each line is one span: ``{"name", "began", "ended", "thread", ...}`` with ``time.perf_counter``
times (the monotonic clock, the same in every process of the machine, so a client's own
timestamps can be laid beside them: ``bench/lsp_vs_json_ls.py --trace``). Spans: the client's
bytes read (``read``), each message handled (``handle``), each answer written (``send``), the
cyclic garbage collector's passes (``gc``), and the phases of the work named where they run
(``parse``, ``lint``, ``report``, ...).

Only the standard library is imported here: the server's start-up reads it before pygls.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["ENVIRONMENT_VARIABLE", "TracedStream", "enabled", "span", "start_from_environment"]

ENVIRONMENT_VARIABLE = "WORKRAIL_LSP_TRACE"

_NO_SPAN = contextlib.nullcontext()


class _Trace:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - process-long
        self._lock = threading.Lock()
        self._gc_began = 0.0

    def record(self, name: str, began: float, ended: float, **extra: Any) -> None:
        line = json.dumps(
            {
                "name": name,
                "began": began,
                "ended": ended,
                "thread": threading.current_thread().name,
                **extra,
            }
        )
        with self._lock:
            self._file.write(line + "\n")

    @contextlib.contextmanager
    def span(self, name: str, **extra: Any) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.record(name, began, time.perf_counter(), **extra)

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_began = time.perf_counter()
        else:
            self.record("gc", self._gc_began, time.perf_counter(), generation=info["generation"])


_trace: _Trace | None = None


def enabled() -> bool:
    return _trace is not None


def span(name: str, **extra: Any) -> contextlib.AbstractContextManager[None]:
    """A span named ``name`` around a ``with`` block when tracing is on; nothing otherwise."""
    return _trace.span(name, **extra) if _trace is not None else _NO_SPAN


def record(name: str, began: float, ended: float, **extra: Any) -> None:
    if _trace is not None:
        _trace.record(name, began, ended, **extra)


def start_from_environment() -> None:
    """Start tracing into the file ``WORKRAIL_LSP_TRACE`` names, if it names one."""
    global _trace
    path = os.environ.get(ENVIRONMENT_VARIABLE)
    if not path or _trace is not None:
        return
    _trace = _Trace(path)
    gc.callbacks.append(_trace.on_gc)


class TracedStream:
    """The client's stream with each body read as a span (``read``): its end is when the server
    had the whole message."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def readline(self) -> bytes:
        line: bytes = self._stream.readline()  # waiting for the client: not the server's time
        return line

    def read(self, size: int) -> bytes:
        with span("read", part="body", size=size):
            data: bytes = self._stream.read(size)
        return data
