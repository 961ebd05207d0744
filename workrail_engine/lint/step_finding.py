"""What a per-step check finds: a `Finding` relative to its step, and a step's `StepFindings`.

Its own module so that the checks (commands, expressions, references), which build findings, and
`step_check_cache`, which runs the checks, import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..evaluation.templates import TemplateLiteral, TemplateRef
from ..text.document import WorkflowDocument

__all__ = ["Finding", "StepFindings"]


@dataclass(frozen=True, slots=True)
class Finding:
    pointer: str  # relative to the step
    code: str
    severity: Severity
    message: str
    data: dict[str, Any] = field(default_factory=dict)
    on_key: bool = False  # shown on the key (or the object's brace) rather than the value

    def place(self, doc: WorkflowDocument, step_pointer: str) -> Diagnostic:
        pointer = step_pointer + self.pointer
        span = doc.opening_span(pointer) if self.on_key else doc.span(pointer)
        return Diagnostic(self.code, self.severity, self.message, pointer, span, data=self.data)


@dataclass(frozen=True, slots=True)
class StepFindings:
    findings: tuple[Finding, ...]
    # (pointer relative to the step, the references in it, the literals in it where the string is
    # rendered — text in braces that is no reference; empty where the string is shown as written)
    templates: tuple[tuple[str, tuple[TemplateRef, ...], tuple[TemplateLiteral, ...]], ...]
