"""Output formats of `workrail validate`: text (for people), json, sarif and github (for machines).

Each format lives in its own module behind :class:`Formatter`; only the one asked for is imported,
which keeps `workrail validate --format json` from paying for the text format's code frames.
"""

from __future__ import annotations

import importlib

from workrail_engine.cli.formatters.base import Formatter

__all__ = ["FORMATS", "Formatter", "formatter_class"]

# format name -> (module, class)
_REGISTRY = {
    "text": ("text", "TextFormatter"),
    "json": ("json_format", "JsonFormatter"),
    "sarif": ("sarif", "SarifFormatter"),
    "github": ("github", "GithubFormatter"),
}
FORMATS = tuple(_REGISTRY)


def formatter_class(name: str) -> type[Formatter]:
    """The formatter of ``name`` (one of :data:`FORMATS`)."""
    module, attribute = _REGISTRY[name]
    cls: type[Formatter] = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    return cls
