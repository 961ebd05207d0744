"""Applying the quick fixes that diagnostics carry: ``workrail validate --fix`` and the language
server's "fix all" action both call :func:`fix_text`, so a file fixed from either is the same file.

The edits are the ones the editor offers one by one as quick fixes (``Diagnostic.fixes``); nothing
here invents an edit. A diagnostic's fix is applied when it has exactly one (several are
alternatives the author has to choose from) and that one is safe, or unsafe fixes are allowed.
A fix waits for the next pass when its edits overlap one already taken, or when its diagnostic's
value contains or lies inside one already being fixed (renaming a misspelt ``promt`` and inserting
the "missing" ``prompt`` in the same object would make two keys of one); each pass re-parses and
re-lints the text, so every edit applies to the text it was computed for.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, Fix, TextEdit
from ..text.document import WorkflowDocument, parse_document
from .pipeline import lint_document

__all__ = ["FixOutcome", "apply_edits", "fix_text", "fixable"]

# Each pass fixes every non-overlapping diagnostic; ruff stops at 100 passes for the same reason:
# a pair of fixes that keep undoing each other must not loop for ever.
MAX_PASSES = 100


def fixable(diagnostic: Diagnostic, *, unsafe: bool = False) -> Fix | None:
    """The fix ``--fix`` would apply for this diagnostic, or None."""
    if len(diagnostic.fixes) != 1:
        return None
    fix = diagnostic.fixes[0]
    return fix if (fix.safe or unsafe) and fix.edits else None


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (offsets all refer to ``text``)."""
    out: list[str] = []
    at = 0
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        if edit.span.start < at:
            raise ValueError(f"overlapping edits at offset {edit.span.start}")
        out += [text[at : edit.span.start], edit.new_text]
        at = edit.span.end
    out.append(text[at:])
    return "".join(out)


def _overlaps(edit: TextEdit, taken: Sequence[TextEdit]) -> bool:
    # Two insertions at one offset overlap too: their order would be a guess.
    return any(
        edit.span.start <= other.span.end and other.span.start <= edit.span.end for other in taken
    )


def _nested(pointer: str, others: Sequence[str]) -> bool:
    """Whether ``pointer`` is one of ``others``, inside one, or holds one."""
    return any(
        a == b or a.startswith(b + "/")
        for other in others
        for a, b in ((pointer, other), (other, pointer))
    )


@dataclass
class FixOutcome:
    """The text after every fix that applied, its document and its remaining diagnostics."""

    text: str
    document: WorkflowDocument
    diagnostics: list[Diagnostic]
    fixed: Counter[str] = field(default_factory=Counter)
    """How many diagnostics were fixed, per code."""

    @property
    def fixed_count(self) -> int:
        return sum(self.fixed.values())


def fix_text(
    text: str,
    path: str | os.PathLike[str] | None = None,
    fmt: str | None = None,
    *,
    unsafe: bool = False,
    enabled: Callable[[Diagnostic], bool] = lambda _: True,
) -> FixOutcome:
    """Apply the fixes of ``text``'s diagnostics (those ``enabled`` keeps) until none is left."""
    fixed: Counter[str] = Counter()
    for _ in range(MAX_PASSES):
        document = parse_document(text, path, fmt)
        diagnostics = [d for d in lint_document(document) if enabled(d)]
        taken: list[TextEdit] = []
        codes: list[str] = []
        pointers: list[str] = []
        # The innermost first: renaming `promt` makes the object's "missing prompt" go away.
        for diagnostic in sorted(diagnostics, key=lambda d: -d.pointer.count("/")):
            fix = fixable(diagnostic, unsafe=unsafe)
            if fix is None or any(_overlaps(e, taken) for e in fix.edits):
                continue
            if _nested(diagnostic.pointer, pointers):
                continue
            taken.extend(fix.edits)
            codes.append(diagnostic.code)
            pointers.append(diagnostic.pointer)
        fixed_text = apply_edits(text, taken) if taken else text
        if fixed_text == text:
            return FixOutcome(text, document, diagnostics, fixed)
        fixed.update(codes)
        text = fixed_text
    document = parse_document(text, path, fmt)
    return FixOutcome(text, document, [d for d in lint_document(document) if enabled(d)], fixed)
