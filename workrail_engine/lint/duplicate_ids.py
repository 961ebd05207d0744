"""WR603: two files of one catalog using the same workflow id (only one can be found by id)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, Related, Severity

if TYPE_CHECKING:
    from ..text.document import WorkflowDocument
    from ..text.tolerant_document import TolerantDocument

__all__ = ["duplicate_workflow_ids"]


def duplicate_workflow_ids(
    documents: Iterable[WorkflowDocument | TolerantDocument],
) -> dict[str, list[Diagnostic]]:
    """WR603 for each file whose workflow id another file also uses, keyed by path (an editor
    passes the tolerant tree of an open document that does not parse yet)."""
    by_id: dict[str, list[WorkflowDocument | TolerantDocument]] = defaultdict(list)
    for doc in documents:
        if isinstance(doc.value, Mapping) and isinstance(doc.value.get("id"), str):
            by_id[doc.value["id"]].append(doc)
    out: dict[str, list[Diagnostic]] = defaultdict(list)
    for workflow_id, docs in by_id.items():
        if len(docs) < 2:
            continue
        for doc in docs:
            related = tuple(
                Related(
                    f"{workflow_id!r} is also the id of this workflow",
                    other.span("/id"),
                    other.path,
                )
                for other in docs
                if other is not doc
            )
            message = f"Workflow id {workflow_id!r} is used by {len(docs)} files; only one of them can be found by id"
            out[doc.path or ""].append(
                Diagnostic(
                    "WR603", Severity.ERROR, message, "/id", doc.span("/id"), related=related
                )
            )
    return dict(out)
