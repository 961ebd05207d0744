"""Diagnostics: the engine's lint results in LSP form, kept in one store, pulled or pushed.

The items are exactly ``lint_document``'s for the document's text (what ``workrail validate``
prints), plus the engine's workspace-level checks against the workflows the workspace index
found: ``duplicate_workflow_ids`` (WR603) against the workspace's other workflow files, and
WR703/WR709 (a routine template or a delegation naming no workflow) against those and the
catalog's other sources. Result ids are
``version.generation.length.config`` (the workspace index's generation; how many project
configuration changes the server has seen), so a pull for an unchanged document is answered
"unchanged" without work.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from workrail_engine.diagnostics import Diagnostic, Severity
from workrail_engine.lint import duplicate_workflow_ids
from workrail_engine.lint.upstream import delegation_diagnostics, template_call_diagnostics
from workrail_engine.text.document import LineIndex, WorkflowDocument, read_document

from . import tracing
from .configuration import reported
from .disk_files import ReadTimedOut, bounded_read, read_unopened
from .documents import DocumentState
from .positions import Positions
from .workspace_index import WorkspaceIndex

__all__ = ["DiagnosticsStore", "lsp_diagnostic"]

log = logging.getLogger(__name__)

SOURCE = "workrail"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def lsp_diagnostic(diagnostic: Diagnostic, state: DocumentState) -> types.Diagnostic:
    related = [
        types.DiagnosticRelatedInformation(
            location=_location(r.path, r.span, state),
            message=r.message,
        )
        for r in diagnostic.related
    ]
    return types.Diagnostic(
        range=state.positions.range(diagnostic.span),
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        source=SOURCE,
        message=diagnostic.message,
        related_information=related or None,
        data={"pointer": diagnostic.pointer, "fixes": [f.title for f in diagnostic.fixes]},
    )


def _location(path: str | None, span, state: DocumentState) -> types.Location:
    if path is None or (state.path is not None and Path(path) == Path(state.path)):
        return types.Location(uri=state.uri, range=state.positions.range(span))
    index = LineIndex(read_unopened(path))
    return types.Location(
        uri=from_fs_path(path) or path, range=Positions(index, state.encoding).range(span)
    )


def _read_documents(paths: list[str]) -> list[WorkflowDocument]:
    """The other files' documents, each read on a read thread: one on a stalled disk is left out."""
    documents = []
    for path in paths:
        try:
            documents.append(bounded_read(functools.partial(read_document, path)))
        except ReadTimedOut as error:
            log.warning("not reading %s: %s", path, error)
    return documents


def _editor_document(state: DocumentState) -> Any:
    """An open document as the editor has it: parsed, or its tree while it does not parse."""
    return state.document if state.document.value is not None else state.tree


@dataclass
class _Report:
    result_id: str
    items: list[types.Diagnostic]


class DiagnosticsStore:
    """The last report per document; the only place diagnostics are kept."""

    def __init__(self, index: WorkspaceIndex) -> None:
        self.index = index
        self.open_document: Callable[[str], DocumentState | None] = lambda path: None
        self._reports: dict[str, _Report] = {}
        # Given what a new report replaces (freeing a large one is left to an idle moment).
        self.on_discard: Callable[[object], None] = lambda replaced: None

    def result_id(self, state: DocumentState) -> str:
        self.index.refresh()
        return f"{state.version}.{self.index.generation}.{len(state.text)}.{state.config_serial}"

    def report(self, state: DocumentState) -> _Report:
        result_id = self.result_id(state)
        known = self._reports.get(state.uri)
        if known is not None and known.result_id == result_id:
            return known
        report = _Report(result_id, self._compute(state))
        self._reports[state.uri] = report
        self.on_discard(known)
        return report

    def forget(self, uri: str) -> object:
        """Drop the document's last report; returned, for the caller to free."""
        return self._reports.pop(uri, None)

    def _compute(self, state: DocumentState) -> list[types.Diagnostic]:
        if not state.is_workflow:
            return []
        diagnostics = state.diagnostics
        with tracing.span("report"):
            items = [lsp_diagnostic(d, state) for d in diagnostics]
            items.extend(self._duplicate_ids(state))
            items.extend(self._unknown_targets(state))
        return items

    def _unknown_targets(self, state: DocumentState) -> list[types.Diagnostic]:
        """WR703 (a routine template) and WR709 (a delegation) naming no workflow the index
        knows of, as `workrail validate` finds them against its catalog; nothing before the
        first scan has ended (its end publishes again)."""
        if state.path is None or not isinstance(state.document.value, dict):
            return []
        known = self.index.known_ids()
        if known is None:
            return []
        documents = [state.document]
        found = [
            *template_call_diagnostics(documents, known).get(state.path, []),
            *(
                d
                for d in delegation_diagnostics(documents, known).get(state.path, [])
                if d.code == "WR709"  # WR710 of the file alone is lint_document's
            ),
        ]
        return [lsp_diagnostic(d, state) for d in reported(found, state.path)]

    def _duplicate_ids(self, state: DocumentState) -> list[types.Diagnostic]:
        value = state.document.value
        workflow_id = value.get("id") if isinstance(value, dict) else None
        if state.path is None or not isinstance(workflow_id, str):
            return []
        others = self.index.others_with_id(state.path, workflow_id)
        if not others:
            return []
        opened = {path: self.open_document(path) for path in others}
        documents = [
            state.document,
            *(_editor_document(s) for s in opened.values() if s is not None),
            *_read_documents([path for path, s in opened.items() if s is None]),
        ]
        found = reported(duplicate_workflow_ids(documents).get(state.path, []), state.path)
        return [lsp_diagnostic(d, state) for d in found]
