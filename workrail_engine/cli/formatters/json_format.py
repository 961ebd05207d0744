"""JSON for scripts: every file checked, its diagnostics with 1-based positions, and the totals."""

from __future__ import annotations

import json
from collections.abc import Sequence

from workrail_engine.cli.formatters.base import Formatter
from workrail_engine.lint.report import FileReport, Summary, report_json

__all__ = ["JsonFormatter"]


class JsonFormatter(Formatter):
    name = "json"

    def render(self, reports: Sequence[FileReport], summary: Summary) -> str:
        # default=str: a diagnostic's free-form `data` must never make the output fail.
        out = {**report_json(reports, summary), **self.extra}
        return json.dumps(out, indent=2, ensure_ascii=False, default=str) + "\n"
