"""The one model for every problem found in a workflow file.

The CLI, the language server, the MCP tools and pre-commit all report these same objects; each
front end only renders them. Spans are offsets into the document's text (Python string indices,
i.e. code points); adapters convert them to line/column in whatever encoding their client needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Diagnostic", "Fix", "Related", "Severity", "Span", "TextEdit"]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Span:
    """Half-open range ``[start, end)`` of character offsets into a document's text."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid span {self.start}..{self.end}")

    def to_dict(self) -> dict[str, int]:
        return {"start": self.start, "end": self.end}


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace the text in ``span`` with ``new_text`` (an empty span inserts)."""

    span: Span
    new_text: str

    def to_dict(self) -> dict[str, Any]:
        return {"span": self.span.to_dict(), "newText": self.new_text}


@dataclass(frozen=True, slots=True)
class Fix:
    """A quick fix a front end may offer: a title and the edits that make it.

    ``safe``: the edit keeps what the author meant (a trailing comma removed, a YAML number quoted
    back to the text it was written as), so ``workrail validate --fix`` applies it unasked. A
    guess (the closest key name, a placeholder value, a renamed id) is unsafe: offered in the
    editor, applied by the command line only with ``--unsafe-fixes``.
    """

    title: str
    edits: tuple[TextEdit, ...]
    safe: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "edits": [e.to_dict() for e in self.edits], "safe": self.safe}


@dataclass(frozen=True, slots=True)
class Related:
    """Another place that explains a diagnostic (the first of two duplicate ids, say).

    ``path`` is None when the place is in the same document.
    """

    message: str
    span: Span
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "span": self.span.to_dict()}
        if self.path is not None:
            out["path"] = self.path
        return out


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem: a stable code (``WR101``), a severity, a message and where it is.

    ``pointer`` is the JSON pointer of the value concerned (``/steps/3/runCondition/var``);
    ``""`` is the whole document. ``span`` is the text it should be shown on.
    """

    code: str
    severity: Severity
    message: str
    pointer: str
    span: Span
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[int, int, str, str]:
        return (self.span.start, self.span.end, self.code, self.message)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "pointer": self.pointer,
            "span": self.span.to_dict(),
        }
        if self.related:
            out["related"] = [r.to_dict() for r in self.related]
        if self.fixes:
            out["fixes"] = [f.to_dict() for f in self.fixes]
        if self.data:
            out["data"] = self.data
        return out
