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
