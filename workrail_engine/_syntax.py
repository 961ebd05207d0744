"""A syntax problem found while parsing JSON or YAML text, before it becomes a Diagnostic."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SyntaxProblem"]


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    message: str
    start: int
    end: int
    code: str = "WR001"
    # A quick fix, when the repair is certain: replace [fix_start, fix_end) with fix_text.
    fix_title: str | None = None
    fix_start: int = 0
    fix_end: int = 0
    fix_text: str = ""
