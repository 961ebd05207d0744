"""A problem found inside a condition or validation criteria, before anything is evaluated.

Conditions and rules are checked statically (wrong operand types, invalid regexes, invalid JSON
Schemas) so that evaluation never has to guess. The lint module turns each ``Problem`` into a
``Diagnostic`` by prefixing the pointer of the condition or criteria inside the workflow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..text.json_pointer import pointer_join

__all__ = ["Problem", "json_type_name", "pointer_join"]


def json_type_name(value: Any) -> str:
    """How a problem message names a JSON value's type: "a string", "an array", "null"…"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__  # not JSON at all: say what it is


@dataclass(frozen=True, slots=True)
class Problem:
    """``pointer`` is relative to the checked value ("" is the value itself, "/and/1/gt" inside)."""

    pointer: str
    code: str
    message: str

    def under(self, prefix: str) -> Problem:
        """The same problem seen from an enclosing value: ``prefix`` + this pointer."""
        return Problem(prefix + self.pointer, self.code, self.message)

    def to_dict(self) -> dict[str, str]:
        return {"pointer": self.pointer, "code": self.code, "message": self.message}
