"""The ``workrail.validateWorkspace`` command: lint every workflow file under the workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workrail_engine.lint import duplicate_workflow_ids, lint_path

from .configuration import Settings
from .workspace_index import candidate_files

__all__ = ["IS_WORKFLOW", "VALIDATE_WORKSPACE", "validate_workspace"]

VALIDATE_WORKSPACE = "workrail.server.validateWorkspace"
IS_WORKFLOW = "workrail.server.isWorkflow"
"""Arguments ``(uri, text)``; answers whether the server treats that document as a workflow."""


def validate_workspace(roots: list[Path], settings: Settings) -> dict[str, Any]:
    """Every workflow file's diagnostics (as ``workrail validate --format json`` shapes them)."""
    results = []
    for path in candidate_files(roots, settings):
        try:
            head = Path(path).read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError:
            continue
        if settings.is_workflow(path, head):
            results.append(lint_path(path))
    duplicates = duplicate_workflow_ids([r.document for r in results])
    files = []
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
