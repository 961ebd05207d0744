"""Output formats of `workrail validate`: text (for people), json, sarif and github (for machines)."""

from __future__ import annotations

from workrail_engine.cli.formatters.base import Formatter
from workrail_engine.cli.formatters.github import GithubFormatter
from workrail_engine.cli.formatters.json_format import JsonFormatter
from workrail_engine.cli.formatters.sarif import SarifFormatter
from workrail_engine.cli.formatters.text import TextFormatter

__all__ = ["FORMATTERS", "Formatter", "GithubFormatter", "JsonFormatter", "SarifFormatter", "TextFormatter"]

FORMATTERS: dict[str, type[Formatter]] = {
    cls.name: cls for cls in (TextFormatter, JsonFormatter, SarifFormatter, GithubFormatter)
}
