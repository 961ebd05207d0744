"""A code frame: the source line of a diagnostic with carets under its span, ruff style.

Carets are aligned by display width (wide CJK characters take two cells, combining marks none,
tabs are repeated in the padding), so the caret sits under the right text in a terminal even on
non-ASCII lines. Very long lines (minified JSON) are cut to a window around the span.
"""

from __future__ import annotations

import json
import unicodedata

__all__ = ["code_frame", "printable", "printable_path"]

WINDOW = 120  # longest line shown whole; longer lines are cut around the span
LEAD = 40  # characters kept before the span when a line is cut
ELLIPSIS = "…"


def printable(text: str) -> str:
    """``text`` with control characters (terminal escapes included) made visible and harmless."""
    if text.isprintable():
        return text
    return "".join(
        ch if ch == "\t" or ch.isprintable() or ch == " " else "\N{REPLACEMENT CHARACTER}"
        for ch in text
    )


def printable_path(path: object) -> str:
    """A path as text output shows it: unchanged when every character prints; otherwise escaped
    as JSON and SARIF escape it (``\\n``, ``\\u001b``, backslashes doubled), so a file named
    with a newline cannot forge a second ``path:line:col:`` line or move the cursor."""
    text = str(path)
    if text.isprintable():
        return text
    return "".join(
        json.dumps(ch, ensure_ascii=False)[1:-1] if ch == "\\" or not ch.isprintable() else ch
        for ch in text
    )


def _width(ch: str) -> int:
    if ch == "\t":
        return 1
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _padding(prefix: str) -> str:
    return "".join("\t" if ch == "\t" else " " * _width(ch) for ch in prefix)


def _window(line: str, start: int, end: int) -> tuple[str, int, int]:
    """Cut ``line`` around ``[start, end)``; returns the shown text and the shifted span."""
    if len(line) <= WINDOW:
        return line, start, end
    first = max(0, start - LEAD)
    last = min(len(line), first + WINDOW)
    shown = line[first:last]
    head = ELLIPSIS if first > 0 else ""
    tail = ELLIPSIS if last < len(line) else ""
    shift = len(head) - first
    return head + shown + tail, start + shift, min(end, last) + shift


def code_frame(line_number: int, line: str, start: int, end: int, *, label: str = "") -> list[str]:
    """The frame's lines: a gutter, the source line, and carets under columns ``[start, end)``.

    ``start``/``end`` are 0-based code-point columns within ``line``; ``end`` past the line's
    end (a span that goes on to later lines) is clamped, and an empty span gets one caret.
    """
    line = printable(line)
    end = min(max(end, start), len(line))
    shown, start, end = _window(line, start, end)
    carets = "^" * max(1, sum(_width(ch) for ch in shown[start:end]))
    gutter = " " * len(str(line_number))
    marker = _padding(shown[:start]) + carets + (f" {label}" if label else "")
    return [
        f"{gutter} |",
        f"{line_number} | {shown}".rstrip(),
        f"{gutter} | {marker}",
    ]
