"""The ``workrail.validateWorkspace`` command: lint every workflow file under the workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workrail_engine.lint.report import Summary, lint_files, report_json

from .configuration import Settings
from .workspace_index import candidate_files

__all__ = ["IS_WORKFLOW", "VALIDATE_WORKSPACE", "validate_workspace"]

VALIDATE_WORKSPACE = "workrail.server.validateWorkspace"
IS_WORKFLOW = "workrail.server.isWorkflow"
"""Arguments ``(uri, text)``; answers whether the server treats that document as a workflow."""


def validate_workspace(roots: list[Path], settings: Settings) -> dict[str, Any]:
    """Every workflow file's diagnostics, in the shape of ``workrail validate --format json``."""
    paths = []
    for path in candidate_files(roots, settings):
        try:
            head = Path(path).read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError:
            continue
        if settings.is_workflow(path, head):
            paths.append(os.fspath(path))
    reports = lint_files(paths)
    return report_json(reports, Summary.of(reports))
