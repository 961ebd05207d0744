"""A syntax problem found while parsing JSON or YAML text, before it becomes a Diagnostic."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RAW_SURROGATE", "UNPAIRED_SURROGATE", "SyntaxProblem", "has_raw_surrogate"]


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    """Why a text does not parse, where (characters start..end), and its fix when one is certain."""

    message: str
    start: int
    end: int
    code: str = "WR001"
    # A quick fix, when the repair is certain: replace [fix_start, fix_end) with fix_text.
    fix_title: str | None = None
    fix_start: int = 0
    fix_end: int = 0
    fix_text: str = ""


# Any surrogate code point in a str is unpaired (pairs decode to one character). Such text is not
# Unicode and breaks every consumer (an editor's buffer can hold one: LSP sends "\ud800" escapes).
RAW_SURROGATE = re.compile("[\ud800-\udfff]")
UNPAIRED_SURROGATE = (
    "Unpaired UTF-16 surrogate in a string: it is not valid Unicode text "
    "(remove it or use a real character)"
)


def has_raw_surrogate(text: str) -> bool:
    # Both in C: an ASCII text has none, and encoding fails exactly on a lone surrogate (~1 ms
    # on 1 MB where the character-class search takes ~8 ms).
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
