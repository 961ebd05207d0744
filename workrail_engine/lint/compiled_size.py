"""WR811 where a file checked would compile past the size limits (see ``compile/_budget.py``).

The compile step runs when a workflow is served: without this check a file whose routine calls,
bindings or refs expand to a gigabyte would pass `workrail validate` and then fail when served. The
check compiles each file that can grow — against the routines among the files checked, then the
catalog's — and reports the compile step's size problems; its other problems have lint codes of
their own (WR703 for a missing routine) or appear when the workflow is served.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, Severity
from ..text.document import WorkflowDocument

if TYPE_CHECKING:
    from ..compile import RoutineLookup

__all__ = ["can_grow_when_compiled", "compiled_size_diagnostics"]

# Only these make the compile step add text; a file without any of them compiles to itself.
# (Features add text only to steps with promptBlocks, and only when the workflow's own
# "features" key names some: that key is looked up in the value, since the word "features" in a
# prompt's prose sent a quarter of the files of bench/validate.py through a compile for nothing.)
# "wr." stands for the binding and ref tokens, which the compile step also reads with spaces
# inside the braces (``{{ wr.refs.x }}``); ``{"kind": "ref"}`` parts exist only inside
# promptBlocks. Each mark is a scan of the whole text; "wr." by a pattern, whose search for a
# fixed start is twice as fast as `in` here (str's search tests each place by the needle's last
# character, and "." shares its filter bit with the common "n").
_GROWS = ("templateCall", "promptBlocks")
_BINDING_OR_REF = re.compile(r"wr\.")
# An escape spells a mark without its letters in the text ("w\u0072." is "wr."): in JSON a \u
# escape of an ASCII character (escapes of other characters are common and cannot spell a mark);
# in YAML's double-quoted scalars \x, \u, \U and a backslash that joins two lines.
_SPELLED_BY_ESCAPES = {
    "json": re.compile(r"\\u00[2-7][0-9A-Fa-f]"),
    "yaml": re.compile(r"\\[xuU]|\\\r?\n"),
}


def compiled_size_diagnostics(
    documents: Iterable[WorkflowDocument], catalog_routine: RoutineLookup | None = None
) -> dict[str, list[Diagnostic]]:
    """WR811 for each file that would compile past a size limit, keyed by path."""
    documents = list(documents)
    own = {
        doc.value["id"]: doc.value
        for doc in documents
        if isinstance(doc.value, dict) and isinstance(doc.value.get("id"), str)
    }

    def routine(name: str) -> Mapping[str, Any] | None:
        found = own.get(name)
        return found if found is not None or catalog_routine is None else catalog_routine(name)

    out: dict[str, list[Diagnostic]] = {}
    for doc in documents:
        if not isinstance(doc.value, dict) or not can_grow_when_compiled(doc):
            continue
        # Imported here: most runs have no file that can grow, and skip the compile step's import.
        from ..compile import compile_workflow

        try:
            problems = compile_workflow(doc.value, routine).problems
        except Exception:  # noqa: BLE001 - a compile bug must not cost the other files their report
            import logging

            logging.getLogger(__name__).exception(
                "compiling %s to measure it failed", doc.path or "a document"
            )
            continue
        found = [
            Diagnostic("WR811", Severity.ERROR, p.message, p.pointer, doc.span(p.pointer))
            for p in problems
            if p.code == "WR811"
        ]
        if found:
            out[doc.path or ""] = found
    return out


def can_grow_when_compiled(doc: WorkflowDocument) -> bool:
    """Whether compiling the document could add text (only then can it pass a size limit)."""
    workflow, text = doc.value, doc.text
    if not isinstance(workflow, dict):
        return False
    syntax = "json" if doc.format == "json" else "yaml"
    return (
        "features" in workflow
        or any(mark in text for mark in _GROWS)
        or _BINDING_OR_REF.search(text) is not None
        or _spelled_by_escapes(text, syntax)
    )


def _spelled_by_escapes(text: str, syntax: str) -> bool:
    # YAML's pattern starts with a choice, which its search tests at every character: a search
    # for the backslash (in C, at a fraction of the cost) comes first; most texts hold none.
    # JSON's starts with a fixed \u00, which its own search finds faster than `"\\u" in text`
    # would (backslashes are common in JSON strings, and "u" more so).
    if syntax == "yaml" and "\\" not in text:
        return False
    return _SPELLED_BY_ESCAPES[syntax].search(text) is not None
