"""JSON for scripts: every file checked, its diagnostics with 1-based positions, and the totals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any

from workrail_engine.cli.formatters.base import Formatter
from workrail_engine.lint.report import FileReport, Summary, report_json

__all__ = ["JsonFormatter", "indented_json"]


class JsonFormatter(Formatter):
    name = "json"

    def render(self, reports: Sequence[FileReport], summary: Summary) -> str:
        return indented_json(report_json(reports, summary)) + "\n"


_INDENT = "  "
_CONSTANTS = {None: "null", True: "true", False: "false"}


def indented_json(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False, default=str)``, character for character,
    at half its cost: with an indent, the standard library encodes in Python through a generator
    per nesting level, each piece of text passed up through all of them. A value json cannot
    encode is written as its ``str()`` (a diagnostic's free-form ``data`` must never make the
    output fail)."""
    out: list[str] = []
    _encode(value, out, "\n")
    return "".join(out)


def _encode(value: Any, out: list[str], newline: str) -> None:
    """Append the text of ``value``; ``newline`` starts a line at its depth."""
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None or value is True or value is False:
        out.append(_CONSTANTS[value])
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = newline + _INDENT
        opening = "[" + inner
        for item in value:
            out.append(opening)
            opening = "," + inner
            if type(item) is str:
                out.append(encode_basestring(item))
            else:
                _encode(item, out, inner)
        out.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + _INDENT
        opening = "{" + inner
        for key, item in value.items():
            out.append(opening)
            opening = "," + inner
            out.append(encode_basestring(key if type(key) is str else _key(key)))
            if type(item) is str:
                out.append(": " + encode_basestring(item))
            else:
                out.append(": ")
                _encode(item, out, inner)
        out.append(newline + "}")
    else:
        _encode(str(value), out, newline)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    """A key as json writes it: strings as they are, numbers and constants as their JSON text."""
    if isinstance(key, str):
        return key
    if key is None or key is True or key is False:
        return _CONSTANTS[key]
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return _float(key)
    # what json.dumps raises for such a key
    return json.dumps({key: None})
