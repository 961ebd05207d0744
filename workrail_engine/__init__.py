"""WorkRail's workflow engine: documents, diagnostics, the catalog, conditions, rules and runs.

No protocol lives here; the MCP server, the language server and the CLI are adapters over it.
Modules are imported on first use (``workrail_engine.catalog``…), so that a front end pays at
start-up only for what it touches. The API is described in docs/engine-api.md.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "answers",
    "catalog",
    "cli",
    "compile",
    "definition",
    "diagnostics",
    "errors",
    "evaluation",
    "home",
    "limits",
    "lint",
    "project_config",
    "runs",
    "schema",
    "serving",
    "sessions",
    "sources",
    "text",
]


def __getattr__(name: str) -> Any:
    if name in __all__ and name != "__version__":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
