"""JSON for scripts: every file checked, its diagnostics with 1-based positions, and the totals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from workrail_engine.cli.formatters.base import Formatter
from workrail_engine.cli.report import FileReport, Summary
from workrail_engine.diagnostics import Diagnostic

__all__ = ["JsonFormatter"]


def _diagnostic(report: FileReport, diagnostic: Diagnostic) -> dict[str, Any]:
    loc = report.location(diagnostic)
    out = diagnostic.to_dict()
    out.update(line=loc.line, column=loc.column, endLine=loc.end_line, endColumn=loc.end_column)
    return out


class JsonFormatter(Formatter):
    name = "json"

    def render(self, reports: Sequence[FileReport], summary: Summary) -> str:
        payload = {
            "summary": {
                "filesChecked": summary.files_checked,
                "filesWithProblems": summary.files_with_problems,
                "errors": summary.errors,
                "warnings": summary.warnings,
                "infos": summary.infos,
                "passed": not summary.failed,
            },
            "files": [
                {"path": r.path, "diagnostics": [_diagnostic(r, d) for d in r.diagnostics]}
                for r in reports
            ],
        }
        # default=str: a diagnostic's free-form `data` must never make the output fail.
        return json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n"
