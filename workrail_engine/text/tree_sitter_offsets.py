"""tree-sitter's positions ↔ the tolerant tree's: tree-sitter counts bytes of UTF-8 and points as
(row, byte column); every span of the tree, like every span of the engine, counts characters."""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cached_property
from typing import Any

__all__ = ["TreeSitterOffsets"]


class TreeSitterOffsets:
    """Byte offsets and points of one text version ↔ character offsets (the same numbers while
    the text is ASCII)."""

    def __init__(self, text: str, data: bytes) -> None:
        self.text = text
        self.data = data
        self.ascii = len(data) == len(text)

    @cached_property
    def char_rows(self) -> list[int]:
        return [0] + [m.end() for m in re.finditer("\n", self.text)]

    @cached_property
    def byte_rows(self) -> list[int]:
        return (
            self.char_rows if self.ascii else [0] + [m.end() for m in re.finditer(b"\n", self.data)]
        )

    def char(self, byte: int) -> int:
        if self.ascii:
            return byte
        row = bisect_right(self.byte_rows, byte) - 1
        start = self.byte_rows[row]
        return self.char_rows[row] + len(self.data[start:byte].decode("utf-8", "replace"))

    def byte(self, char: int) -> int:
        if self.ascii:
            return char
        row = bisect_right(self.char_rows, char) - 1
        start = self.char_rows[row]
        return self.byte_rows[row] + len(self.text[start:char].encode("utf-8", "surrogatepass"))

    def point(self, char: int) -> tuple[int, int]:
        # Counted in C on demand: building every row start would cost ~10 ms per 1 MB version.
        text = self.text
        row = text.count("\n", 0, char)
        line_start = text.rfind("\n", 0, char) + 1
        if self.ascii:
            return row, char - line_start
        return row, len(text[line_start:char].encode("utf-8", "surrogatepass"))

    def span(self, ts: Any) -> tuple[int, int]:
        """A tree-sitter node's span in characters."""
        return self.char(ts.start_byte), self.char(ts.end_byte)
