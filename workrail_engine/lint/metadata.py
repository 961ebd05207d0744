"""Workflow metadata: the id matches the file name; the version is SemVer."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import PurePath

from ..definition.ids import is_workflow_id
from ..diagnostics import Diagnostic, Severity
from ..text.document import WorkflowDocument
from . import edits

__all__ = ["expected_id", "metadata_diagnostics"]

# semver.org's grammar: MAJOR.MINOR.PATCH, optional -prerelease and +build.
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def expected_id(path: str | None) -> str | None:
    """The id a file's name implies: ``coding-task.json`` and ``coding-task.workflow.yaml`` → ``coding-task``."""
    if not path:
        return None
    # basename where it agrees with PurePath(path).name (no trailing "/" or "."): a PurePath per
    # file was 1 % of `workrail validate`'s time on 1,000 files
    name = os.path.basename(path) if not path.endswith(("/", ".")) else PurePath(path).name
    for suffix in (".json", ".yaml", ".yml"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    else:
        return None
    if name.endswith(".workflow"):
        name = name[: -len(".workflow")]
    return name


def metadata_diagnostics(doc: WorkflowDocument) -> list[Diagnostic]:
    workflow = doc.value
    if not isinstance(workflow, Mapping):
        return []
    out = []
    workflow_id = workflow.get("id")
    wanted = expected_id(doc.path)
    if isinstance(workflow_id, str) and wanted and workflow_id != wanted:
        message = f"Workflow id {workflow_id!r} differs from its file name {wanted!r}; agents find workflows by id, people by file name"
        # No fix when the file name is no id itself (upstream's `bug-investigation.agentic.v2.json`).
        fix = (
            edits.replace_value(doc, "/id", wanted, f"Change the id to {wanted!r}")
            if is_workflow_id(wanted)
            else None
        )
        out.append(
            Diagnostic(
                "WR601",
                Severity.WARNING,
                message,
                "/id",
                doc.span("/id"),
                fixes=(fix,) if fix else (),
            )
        )
    version = workflow.get("version")
    if isinstance(version, str) and not _SEMVER.match(version):
        message = f"Version {version!r} is not SemVer (MAJOR.MINOR.PATCH, e.g. '1.0.0')"
        out.append(Diagnostic("WR602", Severity.ERROR, message, "/version", doc.span("/version")))
    return out
