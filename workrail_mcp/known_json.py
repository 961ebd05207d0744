"""The JSON text of large shared results, computed once and spliced into stdio responses.

`workflow_list` over 10,000 workflows is a 1.6 MB answer (3.5 MB as `tools/call`, which carries
it twice: `structuredContent` and the same JSON as text). Dumping it through the SDK's pydantic
serializer cost 15–25 ms of the server's time on every call, although the tools hand back the very
same result object while the catalog is unchanged (`ToolEnv.catalog_view`). The tool layer
remembers the JSON of such a shared object here, by identity; the stdio transport writes a
response whose parts are known without serializing them again. Anything not known goes through
pydantic's serializer, as the SDK would.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pydantic_core

__all__ = ["KnownJson"]

# The SDK copies a result dict (its values are kept): a small dict is also known by its values.
_SMALL_DICT = 8
_MAX_DEPTH = 4  # result → content list → text block → text


def _signature(value: Any) -> tuple[Any, ...] | None:
    """A small dict's keys and the identities of its values (the SDK's copy has the same)."""
    if not isinstance(value, dict) or len(value) > _SMALL_DICT:
        return None
    return tuple((key, id(item)) for key, item in value.items())


class KnownJson:
    """Remembers the JSON bytes of a few shared values (the oldest dropped first) while enabled."""

    def __init__(self, capacity: int = 6) -> None:
        self.enabled = False  # only the stdio transport reads them back; HTTP keeps no copies
        self.capacity = capacity
        self._known: OrderedDict[Any, tuple[Any, bytes]] = OrderedDict()
        self._lock = threading.Lock()  # tools remember from worker threads

    def remember(self, value: Any, text: Callable[[], str]) -> None:
        """``text()`` is the JSON of ``value``; computed only if ``value`` is not known yet.

        ``value`` must not change afterwards (shared catalog views never do).
        """
        if not self.enabled or self._lookup(value) is not None:
            return
        encoded = text().encode("utf-8")
        signature = _signature(value)
        with self._lock:
            for key in (id(value), signature):
                if key is not None:
                    self._known[key] = (value, encoded)
            while len(self._known) > self.capacity * 2:
                self._known.popitem(last=False)

    def _lookup(self, value: Any) -> bytes | None:
        with self._lock:
            found = self._known.get(id(value))
            if found is not None and found[0] is value:
                return found[1]
            signature = _signature(value)
            # The remembered dict holds its values alive, so equal ids mean the same values.
            found = self._known.get(signature) if signature is not None else None
            return found[1] if found is not None else None

    def response_line(self, request_id: Any, result: Any) -> bytes | None:
        """The JSON-RPC response for ``result``, or None when no part of it is known."""
        if not self._known:
            return None
        parts: list[bytes] = []
        if not self._encode(result, _MAX_DEPTH, parts):
            return None
        head = b'{"jsonrpc":"2.0","id":' + pydantic_core.to_json(request_id) + b',"result":'
        return b"".join((head, *parts, b"}"))

    def _encode(self, value: Any, depth: int, out: list[bytes]) -> bool:
        """Appends the JSON of ``value`` to ``out``; True when some part of it was known."""
        known = self._lookup(value)
        if known is not None:
            out.append(known)
            return True
        if (
            depth
            and isinstance(value, dict)
            and len(value) <= _SMALL_DICT
            and all(isinstance(k, str) for k in value)
        ):
            return self._encode_items(
                ((json.dumps(k).encode() + b":", v) for k, v in value.items()),
                b"{",
                b"}",
                depth,
                out,
            )
        if depth and isinstance(value, list) and len(value) <= _SMALL_DICT:
            return self._encode_items(((b"", v) for v in value), b"[", b"]", depth, out)
        out.append(pydantic_core.to_json(value))
        return False

    def _encode_items(
        self, items: Any, opening: bytes, closing: bytes, depth: int, out: list[bytes]
    ) -> bool:
        out.append(opening)
        found = False
        for n, (prefix, item) in enumerate(items):
            out.append((b"," if n else b"") + prefix)
            found = self._encode(item, depth - 1, out) or found
        out.append(closing)
        return found
