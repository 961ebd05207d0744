"""What a per-step check finds: a `Finding` relative to its step, and a step's `StepFindings`.

Its own module so that the checks (commands, expressions, references), which build findings, and
`step_check_cache`, which runs the checks, import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, Fix, Severity, TextEdit
from ..evaluation.templates import TemplateLiteral, TemplateRef
from ..text.document import WorkflowDocument
from .strings import StringSpans

__all__ = ["Finding", "StepFindings"]


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem of one step, placed by a pointer relative to the step."""

    pointer: str  # relative to the step
    code: str
    severity: Severity
    message: str
    data: dict[str, Any] = field(default_factory=dict)
    on_key: bool = False  # shown on the key (or the object's brace) rather than the value
    # characters start..end of the string value, where the finding is inside it (a template in
    # a script, a ShellCheck finding); the whole value where they cannot be mapped exactly
    within: tuple[int, int] | None = None
    # quick fixes inside that string: (title, ((start, end, new text) in the decoded string, ...))
    string_fixes: tuple[tuple[str, tuple[tuple[int, int, str], ...]], ...] = ()

    def place(self, doc: WorkflowDocument, step_pointer: str) -> Diagnostic:
        pointer = step_pointer + self.pointer
        if self.within is None:
            span = doc.opening_span(pointer) if self.on_key else doc.span(pointer)
            return Diagnostic(self.code, self.severity, self.message, pointer, span, data=self.data)
        spans = StringSpans(doc, pointer)
        fixes = []
        for title, changes in self.string_fixes if spans.exact else ():
            edits = []
            for start, end, text in changes:
                written = spans.escaped(text)
                if written is None:
                    break
                edits.append(TextEdit(spans.span(start, end), written))
            else:
                fixes.append(Fix(title, tuple(edits)))
        return Diagnostic(
            self.code,
            self.severity,
            self.message,
            pointer,
            spans.span(*self.within),
            fixes=tuple(fixes),
            data=self.data,
        )


@dataclass(frozen=True, slots=True)
class StepFindings:
    """What the checks of one step alone found: a function of its kind and value."""

    findings: tuple[Finding, ...]
    # (pointer relative to the step, the references in it, the literals in it where the string is
    # rendered — text in braces that is no reference; empty where the string is shown as written)
    templates: tuple[tuple[str, tuple[TemplateRef, ...], tuple[TemplateLiteral, ...]], ...]
    # (pointer relative to the step, variable) of each `var` its conditions read
    reads: tuple[tuple[str, str], ...] = ()
