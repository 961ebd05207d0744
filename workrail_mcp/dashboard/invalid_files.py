"""The invalid files a workflows page lists: from the catalog's diagnostics, bounded per page.

Files can hold 60,000 errors, or be a 1 GB sparse file: re-reading a file once per error to find
each one's line would cost 7–9 s of CPU and 11 MB of HTML per page, reading it whole on every
load as much again. So a page shows at most `MAX_FILES_SHOWN` files and `MAX_PROBLEMS_SHOWN` errors of each, with how many
more there are; the lines of the shown errors come from one bounded read of the file's head (no
further than the last shown error, at most the document limit), remembered until the catalog
reports the file anew.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workrail_engine.limits import MAX_DOCUMENT_BYTES
from workrail_engine.text.regular_files import read_head

__all__ = ["MAX_FILES_SHOWN", "MAX_PROBLEMS_SHOWN", "InvalidFilesListing"]

MAX_FILES_SHOWN = 50
MAX_PROBLEMS_SHOWN = 20
_UTF8_MAX = 4  # bytes per character at most: the head that surely holds a character offset


def _lines(path: Path, offsets: list[int]) -> list[int]:
    """The 1-based line of each character offset, from one read of the file's head."""
    reach = max(offsets, default=0)
    if reach <= 0:
        return [1] * len(offsets)
    head = read_head(path, min(reach * _UTF8_MAX + _UTF8_MAX, MAX_DOCUMENT_BYTES + 1))
    text = head.decode("utf-8", errors="replace")
    return [text.count("\n", 0, max(offset, 0)) + 1 for offset in offsets]


class InvalidFilesListing:
    """Builds the page's list; remembers each file's shown problems while the catalog keeps the
    same diagnostics for it (the catalog does not re-read unchanged files)."""

    def __init__(self) -> None:
        self._known: dict[Path, tuple[object, dict[str, Any]]] = {}

    def listing(self, invalid_files: list[Any]) -> dict[str, Any]:
        shown = [self._entry(f) for f in invalid_files[:MAX_FILES_SHOWN]]
        current = {f.path for f in invalid_files[:MAX_FILES_SHOWN]}
        self._known = {p: known for p, known in self._known.items() if p in current}
        return {"files": shown, "total": len(invalid_files)}

    def _entry(self, invalid: Any) -> dict[str, Any]:
        known = self._known.get(invalid.path)
        if known is not None and known[0] is invalid.diagnostics:
            return known[1]
        errors = [d for d in invalid.diagnostics if d.is_error]
        first = errors[:MAX_PROBLEMS_SHOWN]
        lines = _lines(invalid.path, [d.span.start for d in first])
        entry = {
            "path": str(invalid.path),
            "source": invalid.source.kind,
            "problems": [
                {
                    "line": line,
                    "code": d.code,
                    "severity": d.severity.value,
                    "message": d.message,
                    "pointer": d.pointer,
                }
                for d, line in zip(first, lines, strict=True)
            ],
            "more": len(errors) - len(first),
        }
        self._known[invalid.path] = (invalid.diagnostics, entry)
        return entry
