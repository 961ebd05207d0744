"""Document links: ``$schema`` to the schema, a loop's ``body`` step id to that step."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lsprotocol import types

from workrail_engine.diagnostics import Span
from workrail_engine.steps import walk_steps

from .documents import DocumentState
from .workflow_facts import facts_of

__all__ = ["document_links"]


def document_links(state: DocumentState) -> list[types.DocumentLink] | None:
    value = state.value
    if not state.is_workflow or not isinstance(value, Mapping):
        return None
    out: list[types.DocumentLink] = []
    schema = value.get("$schema")
    found = state.tree.locate("/$schema")
    if isinstance(schema, str) and found is not None:
        target = _schema_target(schema, state.path)
        if target is not None:
            out.append(_link(state, found[1], target, "Open the workflow schema"))
    facts = facts_of(value)
    for site in walk_steps(value):
        body = site.step.get("body")
        if not isinstance(body, str) or body not in facts.steps:
            continue
        located = state.tree.locate(f"{site.pointer}/body")
        step = state.tree.locate(facts.step_pointers[body] + "/id")
        if located is None or step is None:
            continue
        line, column = state.line_index.position(step[1].content_start or step[1].start)
        # VS Code and Neovim open "#L<line>,<column>" (1-based) at that place of the file.
        target = f"{state.uri}#L{line + 1},{column + 1}"
        out.append(_link(state, located[1], target, f"Go to step {body!r}"))
    return out


def _link(state: DocumentState, node, target: str, tooltip: str) -> types.DocumentLink:  # type: ignore[no-untyped-def]
    span = (
        Span(node.content_start, node.content_end)
        if node.kind == "string"
        else Span(node.start, node.end)
    )
    # No tooltip: not every client supports one (Neovim's captured capabilities do not).
    return types.DocumentLink(range=state.positions.range(span), target=target)


def _schema_target(schema: str, path: str | None) -> str | None:
    if schema.startswith(("http://", "https://", "file:")):
        return schema
    if path is None:
        return None
    return (Path(path).parent / schema).resolve().as_uri()
