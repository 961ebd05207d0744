"""The ``workrail.validateWorkspace`` command: lint every workflow file under the workspace."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from workrail_engine.diagnostics import Diagnostic, Severity, Span
from workrail_engine.lint import LintResult, lint_path
from workrail_engine.lint.report import FileReport, Summary, add_cross_file_diagnostics, report_json
from workrail_engine.text.document import parse_document
from workrail_engine.text.workflow_files import read_head

from .configuration import IS_WORKFLOW, VALIDATE_WORKSPACE, Settings, project_config, selected
from .disk_files import READ_TIMEOUT_SECONDS, ReadTimedOut, bounded_read
from .workspace_index import candidate_files

__all__ = ["IS_WORKFLOW", "VALIDATE_WORKSPACE", "validate_workspace"]


def _lint_if_workflow(path: str, settings: Settings) -> LintResult | None:
    # The engine reads regular files only (a FIFO or a device is a WR003, never a blocked read).
    return lint_path(path) if settings.is_workflow(path, read_head(path)) else None


def _timed_out(path: str) -> FileReport:
    diagnostic = Diagnostic(
        "WR003",
        Severity.ERROR,
        f"The file did not answer within {READ_TIMEOUT_SECONDS:g} s: not read",
        "",
        Span(0, 0),
    )
    return FileReport(path, parse_document("", path=path, fmt="json"), [diagnostic])


def validate_workspace(roots: list[Path], settings: Settings) -> dict[str, Any]:
    """Every workflow file's diagnostics, in the shape of ``workrail validate --format json``:
    ``passed`` is false on a warning too when a workspace folder's configuration is strict."""
    settings = settings.frozen()
    reports = []
    for path in candidate_files(roots, settings):
        try:
            result = bounded_read(functools.partial(_lint_if_workflow, path, settings))
        except ReadTimedOut:
            reports.append(_timed_out(path))
            continue
        if result is not None:
            reports.append(FileReport(os.fspath(path), result.document, list(result.diagnostics)))
    add_cross_file_diagnostics(reports)
    for report in reports:
        report.diagnostics = selected(report.diagnostics, report.path)
    strict = any(project_config(str(root)).strict for root in roots)
    return report_json(reports, Summary.of(reports, strict=strict))
