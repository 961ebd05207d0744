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
    "catalog",
    "text",
    "evaluation",
    "serving",
    "definition",
    "conditions",
    "diagnostics",
    "document",
    "errors",
    "lint",
    "navigator",
    "regexes",
    "rules",
    "runs",
    "schema",
    "steps",
    "templates",
    "workflow_files",
]


# Where the modules named at the package's root before issue 24's layout now live; the
# old names stay attributes of the package so that readers of docs/engine-api.md keep
# working.
_HOMES = {
    "conditions": "evaluation.conditions",
    "contracts": "evaluation.contracts",
    "declared": "definition.declared",
    "document": "text.document",
    "formatting": "text.formatting",
    "ids": "definition.ids",
    "json_pointer": "text.json_pointer",
    "loop_source": "serving.loop_source",
    "metrics_profile": "serving.metrics_profile",
    "navigator": "serving.navigator",
    "problems": "evaluation.problems",
    "regexes": "evaluation.regexes",
    "regular_files": "text.regular_files",
    "routine_templates": "definition.routine_templates",
    "rules": "evaluation.rules",
    "step_checks": "evaluation.step_checks",
    "step_prompt": "serving.step_prompt",
    "steps": "definition.steps",
    "templates": "evaluation.templates",
    "tolerant_document": "text.tolerant_document",
    "workflow_files": "text.workflow_files",
}


def __getattr__(name: str) -> Any:
    if name in __all__ or name in _HOMES:
        return importlib.import_module(f"{__name__}.{_HOMES.get(name, name)}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
