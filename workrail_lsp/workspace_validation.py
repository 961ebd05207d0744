"""The ``workrail.validateWorkspace`` command: lint every workflow file under the workspace."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from workrail_engine.diagnostics import Diagnostic, Severity, Span
from workrail_engine.lint import LintResult, duplicate_workflow_ids, lint_path
from workrail_engine.workflow_files import read_head

from .configuration import Settings
from .disk_files import READ_TIMEOUT_SECONDS, ReadTimedOut, bounded_read
from .workspace_index import candidate_files

__all__ = ["IS_WORKFLOW", "VALIDATE_WORKSPACE", "validate_workspace"]

VALIDATE_WORKSPACE = "workrail.server.validateWorkspace"
IS_WORKFLOW = "workrail.server.isWorkflow"
"""Arguments ``(uri, text)``; answers whether the server treats that document as a workflow."""


def _lint_if_workflow(path: str, settings: Settings) -> LintResult | None:
    # The engine reads regular files only (a FIFO or a device is a WR003, never a blocked read).
    return lint_path(path) if settings.is_workflow(path, read_head(path)) else None


def _timed_out(path: str) -> dict[str, Any]:
    diagnostic = Diagnostic(
        "WR003",
        Severity.ERROR,
        f"The file did not answer within {READ_TIMEOUT_SECONDS:g} s: not read",
        "",
        Span(0, 0),
    )
    return {"path": path, "diagnostics": [_row(diagnostic.to_dict(), (0, 0))]}


def validate_workspace(roots: list[Path], settings: Settings) -> dict[str, Any]:
    """Every workflow file's diagnostics (as ``workrail validate --format json`` shapes them)."""
    results = []
    files = []
    for path in candidate_files(roots, settings):
        try:
            result = bounded_read(functools.partial(_lint_if_workflow, path, settings))
        except ReadTimedOut:
            files.append(_timed_out(path))
            continue
        if result is not None:
            results.append(result)
    duplicates = duplicate_workflow_ids([r.document for r in results])
    for result in results:
        diagnostics = [*result.diagnostics, *duplicates.get(result.document.path or "", [])]
        index = result.document.line_index
        files.append(
            {
                "path": os.fspath(result.document.path),
                "diagnostics": [
                    _row(d.to_dict(), index.position(d.span.start)) for d in diagnostics
                ],
            }
        )
    rows = [d for f in files for d in f["diagnostics"]]
    return {
        "files": len(files),
        "errors": sum(1 for d in rows if d["severity"] == "error"),
        "warnings": sum(1 for d in rows if d["severity"] == "warning"),
        "results": files,
    }


def _row(diagnostic: dict[str, Any], position: tuple[int, int]) -> dict[str, Any]:
    return {**diagnostic, "line": position[0] + 1, "column": position[1] + 1}
