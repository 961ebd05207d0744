"""Workspace symbols: every workflow (by name and id) and every step of the workspace's workflow
files, open documents as the editor has them (even half-typed), the others as on disk."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path

from workrail_engine.definition.steps import walk_steps
from workrail_engine.text.document import LineIndex, read_document

from .configuration import Settings
from .documents import DocumentStates
from .positions import Positions
from .workspace_index import candidate_files

__all__ = ["workspace_symbols"]

_LIMIT = 2000


def workspace_symbols(
    query: str, roots: list[Path], settings: Settings, states: DocumentStates
) -> list[types.WorkspaceSymbol]:
    wanted = query.lower()
    out: list[types.WorkspaceSymbol] = []
    settings = settings.frozen()  # the project configuration read once for the walk
    for path in candidate_files(roots, settings):
        state = states.by_path(path)
        if state is not None:
            tree, positions = state.tree, state.positions
        else:
            document = read_document(path)
            if not settings.is_workflow(path, document.text[:4096]):
                continue
            tree = document.tolerant
            positions = Positions(LineIndex(document.text), states.encoding)
        value = tree.value
        if not isinstance(value, dict):
            continue
        uri = from_fs_path(path) or path
        name = value.get("name") if isinstance(value.get("name"), str) else value.get("id")
        found = [(str(name or Path(path).name), types.SymbolKind.Namespace, "", None)]
        for site in walk_steps(value):
            if site.id is not None:
                found.append((site.id, types.SymbolKind.Event, str(name or ""), site.pointer))
        for label, kind, container, pointer in found:
            if wanted and wanted not in label.lower():
                continue
            span = (
                tree.value_span(f"{pointer}/id") if pointer is not None else tree.key_span("/name")
            ) or tree.opening_span(pointer or "")
            out.append(
                types.WorkspaceSymbol(
                    name=label,
                    kind=kind,
                    container_name=container or None,
                    location=types.Location(uri=uri, range=positions.range(span)),
                )
            )
            if len(out) >= _LIMIT:
                return out
    return out
