"""SARIF 2.1.0 for code-scanning services (GitHub code scanning, Azure DevOps, …).

One run, one rule per diagnostic code seen, one result per diagnostic. Columns are counted in
code points (``columnKind: unicodeCodePoints``); regions end exclusively, as SARIF defines them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from workrail_engine import __version__
from workrail_engine.cli.formatters.base import Formatter
from workrail_engine.cli.report import FileReport, Summary
from workrail_engine.diagnostics import Diagnostic, Severity

__all__ = ["SarifFormatter"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def artifact_uri(path: str) -> str:
    """A URI reference: relative paths stay relative (code scanning resolves them against the
    checkout), percent-encoded like any URI (spaces, ``%``, non-ASCII characters)."""
    pure = PurePath(path)
    if pure.is_absolute():
        return Path(path).as_uri()
    return quote("/".join(pure.parts), safe="/")


def _region(report: FileReport, diagnostic: Diagnostic) -> dict[str, int]:
    loc = report.location(diagnostic)
    return {
        "startLine": loc.line,
        "startColumn": loc.column,
        "endLine": loc.end_line,
        "endColumn": loc.end_column,
        "charOffset": diagnostic.span.start,
        "charLength": diagnostic.span.end - diagnostic.span.start,
    }


def _location(uri: str, region: dict[str, int], message: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}
    if message is not None:
        out["message"] = {"text": message}
    return out


class SarifFormatter(Formatter):
    name = "sarif"

    def render(self, reports: Sequence[FileReport], summary: Summary) -> str:
        rules: dict[str, int] = {}
        results = [self._result(r, d, rules) for r in reports for d in r.diagnostics]
        driver = {
            "name": "workrail",
            "version": __version__,
            "rules": [{"id": code} for code in rules],
        }
        run = {
            "tool": {"driver": driver},
            "columnKind": "unicodeCodePoints",
            "artifacts": [{"location": {"uri": artifact_uri(r.path)}} for r in reports],
            "results": results,
        }
        log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
        return json.dumps(log, indent=2, ensure_ascii=False) + "\n"

    def _result(self, report: FileReport, d: Diagnostic, rules: dict[str, int]) -> dict[str, Any]:
        uri = artifact_uri(report.path)
        result: dict[str, Any] = {
            "ruleId": d.code,
            "ruleIndex": rules.setdefault(d.code, len(rules)),
            "level": LEVELS[d.severity],
            "message": {"text": d.message},
            "locations": [_location(uri, _region(report, d))],
        }
        if d.pointer:
            result["properties"] = {"pointer": d.pointer}
        related = [self._related(report, uri, r) for r in d.related if r.path in (None, report.path)]
        if related:
            result["relatedLocations"] = related
        return result

    def _related(self, report: FileReport, uri: str, related: Any) -> dict[str, Any]:
        index = report.document.line_index
        line, col = index.position(related.span.start)
        end_line, end_col = index.position(related.span.end)
        region = {"startLine": line + 1, "startColumn": col + 1, "endLine": end_line + 1, "endColumn": end_col + 1}
        return _location(uri, region, related.message)
