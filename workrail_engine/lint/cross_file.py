"""The checks that compare the files of one batch, and what they need to know of each file.

WR603 (two files share a workflow id), WR703/WR709 (a template call or delegation naming no
workflow among the files or the catalog), WR710 (delegations forming a cycle through the files)
and WR811 (a file compiling past the size limits, its routines among the files) read the whole
document of only some files: those that delegate or call a template, those whose id another
file also has, and, when any file can grow when compiled, every file (a routine it calls may be
any of them). Of the others they need the workflow id alone. `CrossFileFacts` says which is
which, so that a batch checked in several processes (`worker_processes`) parses again, in the
process that reports, only the documents these checks read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic

if TYPE_CHECKING:
    from workrail_engine.compile import RoutineLookup
    from workrail_engine.text.document import WorkflowDocument

__all__ = ["CrossFileFacts", "cross_file_diagnostics", "read_whole", "workflow_id"]


def workflow_id(document: WorkflowDocument) -> str | None:
    """The document's workflow id, when it parsed to an object with a string ``id``."""
    value = document.value
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


@dataclass(frozen=True, slots=True)
class CrossFileFacts:
    """What the cross-file checks need to know of a file before they read it whole."""

    workflow_id: str | None
    parsed: bool
    """The text parsed to a value (an unreadable or broken file takes part in no check)."""
    refers: bool
    """A step delegates to a workflow or calls a template (WR703, WR709, WR710)."""
    can_grow: bool
    """Compiling it could add text: WR811's check compiles it."""

    @classmethod
    def of(cls, document: WorkflowDocument) -> CrossFileFacts:
        from .compiled_size import can_grow_when_compiled
        from .upstream import refers_to_workflows

        parsed = document.value is not None
        return cls(
            workflow_id(document),
            parsed,
            parsed and refers_to_workflows(document),
            parsed and can_grow_when_compiled(document),
        )


def read_whole(facts: Sequence[CrossFileFacts]) -> list[bool]:
    """For each file, whether the cross-file checks read its whole document."""
    if any(f.can_grow for f in facts):
        return [f.parsed for f in facts]  # the routines its compile looks up may be any file
    ids = Counter(f.workflow_id for f in facts if f.workflow_id is not None)
    return [f.refers or (f.workflow_id is not None and ids[f.workflow_id] > 1) for f in facts]


def cross_file_diagnostics(
    documents: Sequence[WorkflowDocument],
    workflow_ids: Iterable[str],
    catalog_ids: Callable[[], Iterable[str]] | None = None,
    catalog_routine: RoutineLookup | None = None,
) -> list[Mapping[str, list[Diagnostic]]]:
    """Each cross-file check's diagnostics, keyed by path, in the order they are added.

    ``documents``: every document of the batch, or at least those `read_whole` picks (in the
    batch's order); ``workflow_ids``: the ids of every file of the batch. ``catalog_ids`` and
    ``catalog_routine`` as for `report.add_cross_file_diagnostics`."""
    from .compiled_size import compiled_size_diagnostics
    from .duplicate_ids import duplicate_workflow_ids
    from .upstream import delegation_diagnostics, template_call_diagnostics

    extras: list[Mapping[str, list[Diagnostic]]] = [
        duplicate_workflow_ids(documents),
        compiled_size_diagnostics(documents, catalog_routine),
    ]
    if catalog_ids is None:
        extras.append(delegation_diagnostics(documents))  # cycles among the files
        return extras
    own_ids = set(workflow_ids)
    catalog: set[str] | None = None
    for check in (template_call_diagnostics, delegation_diagnostics):
        checked = check(documents, own_ids)
        if any(d.code in ("WR703", "WR709") for ds in checked.values() for d in ds):
            catalog = set(catalog_ids()) if catalog is None else catalog
            checked = check(documents, own_ids | catalog)
        extras.append(checked)
    return extras
