"""SARIF 2.1.0 for code-scanning services (GitHub code scanning, Azure DevOps, …).

One run, one rule per diagnostic code seen (its ``name`` is the rule's, as ``--statistics``
prints it), one result per diagnostic. Columns are counted in code points (``columnKind:
unicodeCodePoints``); regions end exclusively, as SARIF defines them. A result's ``fixes`` hold the
fix ``--fix`` would apply, as ruff's SARIF gives it (a replacement per edit), with its
applicability (``safe``, or ``unsafe``: only with ``--unsafe-fixes``) in the fix's properties.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from workrail_engine import __version__
from workrail_engine.cli.formatters.base import Formatter
from workrail_engine.diagnostics import Diagnostic, Severity, Span
from workrail_engine.lint.fixes import fixable
from workrail_engine.lint.report import FileReport, Summary
from workrail_engine.lint.rule_names import rule_name

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


def _region(report: FileReport, span: Span) -> dict[str, int]:
    loc = report.locate(span)
    return {
        "startLine": loc.line,
        "startColumn": loc.column,
        "endLine": loc.end_line,
        "endColumn": loc.end_column,
        "charOffset": span.start,
        "charLength": span.end - span.start,
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
        by_path = {r.path: r for r in reports}
        results = [_result(r, d, rules, by_path) for r in reports for d in r.diagnostics]
        driver = {
            "name": "workrail",
            "version": __version__,
            "rules": [{"id": code, "name": rule_name(code)} for code in rules],
        }
        run = {
            "tool": {"driver": driver},
            "columnKind": "unicodeCodePoints",
            "artifacts": [{"location": {"uri": artifact_uri(r.path)}} for r in reports],
            "results": results,
        }
        log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
        return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _result(
    report: FileReport, d: Diagnostic, rules: dict[str, int], by_path: Mapping[str, FileReport]
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": rules.setdefault(d.code, len(rules)),
        "level": LEVELS[d.severity],
        "message": {"text": d.message},
        "locations": [_location(artifact_uri(report.path), _region(report, d.span))],
    }
    if d.pointer:
        result["properties"] = {"pointer": d.pointer}
    # Related places in files this run did not check cannot be given a region, so they are left out.
    places = [(report if r.path is None else by_path.get(r.path), r) for r in d.related]
    related = [
        _location(artifact_uri(where.path), _region(where, r.span), r.message)
        for where, r in places
        if where
    ]
    if related:
        result["relatedLocations"] = related
    fix = _fix(report, d)
    if fix:
        result["fixes"] = [fix]
    return result


def _fix(report: FileReport, d: Diagnostic) -> dict[str, Any] | None:
    fix = fixable(d, unsafe=True)
    if fix is None:
        return None
    replacements = []
    for edit in fix.edits:
        replacement: dict[str, Any] = {"deletedRegion": _region(report, edit.span)}
        if edit.new_text:
            replacement["insertedContent"] = {"text": edit.new_text}
        replacements.append(replacement)
    change = {"artifactLocation": {"uri": artifact_uri(report.path)}, "replacements": replacements}
    return {
        "description": {"text": fix.title},
        "artifactChanges": [change],
        "properties": {"applicability": "safe" if fix.safe else "unsafe"},
    }
