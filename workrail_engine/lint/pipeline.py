"""One document through every check: syntax, then the content checks (schema, structure,
references, per-step checks, metadata, parameters, and the catalog-wide ones when the caller
knows the catalog), sorted, with one message per problem and at most
``limits.MAX_FINDINGS_PER_FILE`` of them.

A checker that fails costs its file one WR000, never the run or the editor.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, Severity, Span
from ..limits import MAX_FINDINGS_PER_FILE
from ..text.document import WorkflowDocument, parse_document, read_document
from ..text.workflow_files import SUFFIXES as WORKFLOW_SUFFIXES

if TYPE_CHECKING:
    from ..compile import RoutineLookup
    from .step_check_cache import StepsByContent

__all__ = [
    "WORKFLOW_SUFFIXES",
    "LintResult",
    "checker_failed",
    "lint_document",
    "lint_path",
    "lint_text",
]


@dataclass
class LintResult:
    """A document and the diagnostics of every check run on it."""

    document: WorkflowDocument
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]


def lint_document(
    doc: WorkflowDocument,
    workflow_ids: Iterable[str] | None = None,
    routines: RoutineLookup | None = None,
    steps_by_content: StepsByContent | None = None,
) -> list[Diagnostic]:
    """All diagnostics for one document, sorted by position. Never raises for any document.

    ``workflow_ids``: the ids of the catalog the document will join, when the caller knows
    them; a `templateCall` naming none of their routines is then WR703, a delegation naming
    none of them WR709. ``routines``: that catalog's routine lookup, when known; a document
    that would compile too large is then WR811. ``steps_by_content``: the per-step findings of
    the documents checked before in the same batch (`step_check_cache.step_findings`).
    """
    found = list(doc.syntax_errors)
    # A document that parsed to null (a file holding just `null`) is checked like any value: the
    # schema says a workflow is an object. A document that did not parse has its syntax errors.
    if doc.value is not None or not found:
        try:
            found.extend(_content_diagnostics(doc, steps_by_content))
            if workflow_ids is not None:
                from .upstream import delegation_diagnostics, template_call_diagnostics

                own = doc.value.get("id") if isinstance(doc.value, Mapping) else None
                known = {*workflow_ids, *([own] if isinstance(own, str) else [])}
                for check in (template_call_diagnostics, delegation_diagnostics):
                    found.extend(check([doc], known).get(doc.path or "", []))
            if routines is not None:
                from .compiled_size import compiled_size_diagnostics

                found.extend(compiled_size_diagnostics([doc], routines).get(doc.path or "", []))
        except RecursionError:
            found.append(
                Diagnostic("WR005", Severity.ERROR, "Nesting too deep to check", "", doc.span(""))
            )
        except Exception as error:  # noqa: BLE001 - a checker bug must cost one file, not the run or the editor
            import logging  # only here: `workrail validate` starts ~3 ms sooner without it

            logging.getLogger(__name__).exception("checking %s failed", doc.path or "a document")
            found.append(checker_failed(doc, error))
    found.sort(key=Diagnostic.sort_key)
    return _capped(_without_superseded(found))


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


def _capped(found: list[Diagnostic], limit: int = MAX_FINDINGS_PER_FILE) -> list[Diagnostic]:
    """The first ``limit`` findings by position, then one WR009 standing for the rest.

    A file with 20,000 copies of one mistake is one mistake to its author; listing them all only
    floods an editor and a terminal. WR009 takes the highest severity of what it stands for, so
    a file whose errors are all past the cap still fails `workrail validate`.
    """
    if len(found) <= limit:
        return found
    rest = found[limit:]
    severity = max((d.severity for d in rest), key=_SEVERITY_RANK.__getitem__)
    codes = sorted({d.code for d in rest})
    message = (
        f"{len(rest)} more findings from here on are not shown (the first {limit} in this file "
        f"are): {', '.join(codes)}"
    )
    first = rest[0]
    summary = Diagnostic(
        "WR009", severity, message, first.pointer, first.span, data={"notShown": len(rest)}
    )
    return [*found[:limit], summary]


def checker_failed(doc: WorkflowDocument, error: BaseException) -> Diagnostic:
    """WR000: the checker itself failed; worded so that the author reports the bug."""
    message = f"The checker failed on this file ({type(error).__name__}: {error}); please report it"
    return Diagnostic("WR000", Severity.ERROR, message, "", Span(0, min(1, len(doc.text))))


def _without_superseded(found: list[Diagnostic]) -> list[Diagnostic]:
    """Keep one message per problem where the schema and a semantic check both see it.

    A while-loop without a condition fails the schema's ``required`` and our WR203; ``gt`` with a
    string fails the schema's operand type and our WR402. The author should read one message, the
    semantic one, which says why.
    """
    specific = {
        (d.pointer, d.data.get("property"))
        for d in found
        if d.code != "WR103" and "property" in d.data
    }
    typed = {d.pointer for d in found if d.code in _EXPRESSION_CODES}

    mixed_groups = {d.pointer for d in found if d.code == "WR206"}

    def superseded(d: Diagnostic) -> bool:
        if d.code == "WR102" and d.pointer in mixed_groups:
            return True  # the group's 'steps' next to 'parallelDelegations': WR206 says why
        if d.code == "WR103":
            return (d.pointer, d.data.get("property")) in specific
        return d.code in ("WR101", "WR105", "WR106") and d.pointer in typed

    return [d for d in found if not superseded(d)]


_EXPRESSION_CODES = frozenset({"WR401", "WR402", "WR403", "WR404"})


# The modules of the content checks, by name.
_CHECK_MODULES = (
    "declared_context",
    "flow",
    "metadata",
    "parameters",
    "references",
    "schema_errors",
    "step_check_cache",
    "structure",
    "upstream",
)


@functools.cache
def _check_modules() -> SimpleNamespace:
    """The content checks' modules, imported on first use — so that reading a document never
    pays for the schema validator — and once: the import statements in the per-file path cost
    ~1 µs each, every file (3 % of `workrail validate` on 1,000 files)."""
    return SimpleNamespace(
        **{name: importlib.import_module(f"{__package__}.{name}") for name in _CHECK_MODULES}
    )


def _content_diagnostics(
    doc: WorkflowDocument, steps_by_content: StepsByContent | None
) -> list[Diagnostic]:
    checks = _check_modules()
    sites = doc.step_sites
    found = checks.step_check_cache.step_findings(sites, doc.lint_cache, steps_by_content)
    local = [
        finding.place(doc, site.pointer)
        for site, step_found in zip(sites, found, strict=False)
        for finding in step_found.findings
    ]
    return [
        *checks.schema_errors.schema_diagnostics(doc),
        *checks.structure.structure_diagnostics(doc, sites),
        *checks.upstream.upstream_diagnostics(doc, sites),
        *checks.references.reference_diagnostics(doc, sites, found),
        *checks.flow.flow_diagnostics(doc, sites, found),
        *checks.declared_context.context_diagnostics(doc, sites, found),
        *local,
        *checks.metadata.metadata_diagnostics(doc),
        *checks.parameters.parameters_diagnostics(doc),
    ]


def lint_text(
    text: str, path: str | os.PathLike[str] | None = None, fmt: str | None = None
) -> LintResult:
    document = parse_document(text, path, fmt)
    return LintResult(document, lint_document(document))


def lint_path(
    path: str | os.PathLike[str], steps_by_content: StepsByContent | None = None
) -> LintResult:
    document = read_document(path)
    return LintResult(document, lint_document(document, steps_by_content=steps_by_content))
