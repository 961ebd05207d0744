"""Secrets: values read from the environment by declared name, and masked everywhere they could leak.

A workflow declares the *names* of its secrets (``secrets: ["API_TOKEN"]``); the values exist only
in this process's memory while a step runs. They reach a command through its environment (and
through ``{{secrets.NAME}}`` in an argv element, rendered at spawn time, never stored), and every
string that leaves the executor — outputs, stored records, log lines, errors — goes through
`SecretSet.mask` first.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MASK", "MaskingFilter", "SecretSet", "StreamMask"]

MASK = "***"
_MASK_BYTES = MASK.encode()

# Every secret value read in this process, for the log filter (a log line may come from a
# library — DBOS, SQLAlchemy — that knows nothing about our runs).
_seen: set[str] = set()
_seen_lock = threading.Lock()


class MaskingFilter(logging.Filter):
    """Replaces any secret value read in this process with ``***`` in a log record's text."""

    def filter(self, record: logging.LogRecord) -> bool:
        with _seen_lock:
            needles = sorted(_seen, key=len, reverse=True)
        if needles:
            text = record.getMessage()
            if any(needle in text for needle in needles):
                for needle in needles:
                    text = text.replace(needle, MASK)
                record.msg, record.args = text, None
        return True


class SecretSet:
    """The values of a workflow's declared secrets, and the masking of them."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = {name: value for name, value in values.items() if value}
        with _seen_lock:
            _seen.update(self.values.values())
        # Longest first, so a secret that contains another is masked whole.
        self._needles = sorted(set(self.values.values()), key=len, reverse=True)

    @classmethod
    def from_environment(
        cls, names: Iterable[str], environ: Mapping[str, str] | None = None
    ) -> SecretSet:
        if not names:  # most workflows declare none: one set for them all (read at every step)
            return _NO_SECRETS
        source = os.environ if environ is None else environ
        return cls({name: source[name] for name in names if name in source})

    def missing(self, names: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
        source = os.environ if environ is None else environ
        return [name for name in names if not source.get(name)]

    def mask_text(self, text: str) -> str:
        for needle in self._needles:
            if needle in text:
                text = text.replace(needle, MASK)
        return text

    def mask(self, value: Any) -> Any:
        """``value`` with every secret replaced by ``***`` in every string, keys included."""
        if not self._needles:
            return value
        if isinstance(value, str):
            return self.mask_text(value)
        if isinstance(value, Mapping):
            return {self.mask_text(str(k)): self.mask(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.mask(item) for item in value]
        return value


_NO_SECRETS = SecretSet({})


class StreamMask:
    """Masks a byte stream read in chunks, before anything cuts it: a secret split between two
    reads is masked whole. The last ``len(longest secret) - 1`` bytes are held back until the
    next chunk (or `flush`) shows whether they begin a secret."""

    def __init__(self, values: Iterable[str]) -> None:
        # Longest first, so a secret that contains another is masked whole.
        self._needles = sorted({v.encode() for v in values if v}, key=len, reverse=True)
        self._hold = len(self._needles[0]) - 1 if self._needles else 0
        self._carry = b""

    def feed(self, data: bytes) -> bytes:
        """What of the stream so far is masked and final."""
        if not self._needles:
            return data
        text = self._carry + data
        for needle in self._needles:
            if needle in text:
                text = text.replace(needle, _MASK_BYTES)
        cut = max(len(text) - self._hold, 0)
        self._carry = text[cut:]
        return text[:cut]

    def flush(self) -> bytes:
        """The end of the stream: what was held back (it holds no whole secret)."""
        rest, self._carry = self._carry, b""
        return rest
