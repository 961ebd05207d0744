"""Every check of a workflow document — syntax, schema, structure, references, expressions,
commands, metadata — producing the one diagnostics model all front ends print.

`pipeline` runs them over one document (`lint_document`, `lint_text`, `lint_path`); each family
of checks is a module of its own (`schema_errors`, `structure`, `references`, `expressions`,
`commands`, `metadata`, `parameters`, `upstream`, `compiled_size`), the per-step ones cached by
`step_check_cache`; `duplicate_ids` compares files, `cross_file` runs every check that does;
`report` is the multi-file report of `workrail validate`, whose files `worker_processes` can
share out over forked processes; `fixes` applies the fixes diagnostics carry.
"""

from __future__ import annotations

from .duplicate_ids import duplicate_workflow_ids
from .pipeline import (
    WORKFLOW_SUFFIXES,
    LintResult,
    checker_failed,
    lint_document,
    lint_path,
    lint_text,
)

__all__ = [
    "WORKFLOW_SUFFIXES",
    "LintResult",
    "checker_failed",
    "duplicate_workflow_ids",
    "lint_document",
    "lint_path",
    "lint_text",
]
