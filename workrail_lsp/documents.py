"""One parsed, linted state per open document version, shared by every feature.

Handlers never re-parse: they ask ``DocumentStates.get`` for the current version and read its
cached document, diagnostics and position conversions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from workrail_engine.diagnostics import Diagnostic
from workrail_engine.lint import lint_document
from workrail_engine.text.document import LineIndex, WorkflowDocument, detect_format, parse_document
from workrail_engine.text.tolerant_document import TolerantDocument
from workrail_engine.text.tolerant_tree import Node

from . import tracing
from .configuration import Settings, reported
from .positions import Positions

__all__ = ["DocumentState", "DocumentStates"]


@dataclass(eq=False)
class DocumentState:
    uri: str
    version: int | None
    text: str
    path: str | None
    is_workflow: bool
    encoding: str
    config: tuple[Any, ...] = field(default=(), repr=False)
    """The project configurations this state was built under (``Settings.config_of``)."""
    config_serial: int = 0
    """Counts the configuration changes the server has seen: part of the diagnostics' result id."""
    last_good_value: Any = field(default=None, repr=False)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def document(self) -> WorkflowDocument:
        with tracing.span("parse"):
            return parse_document(self.text, self.path)

    @property
    def tree(self) -> TolerantDocument:
        """The tolerant tree every editor feature reads (recovered while the text is broken)."""
        return self.document.tolerant

    @cached_property
    def diagnostics(self) -> list[Diagnostic]:
        if not self.is_workflow:
            return []
        document = self.document
        # Never raises: a checker bug comes back as one WR000 diagnostic (lint_document).
        with tracing.span("lint"):
            return reported(lint_document(document), self.path)

    @cached_property
    def line_index(self) -> LineIndex:
        return self.document.line_index

    @cached_property
    def positions(self) -> Positions:
        return Positions(self.line_index, self.encoding)

    @property
    def value(self) -> Any:
        """The value: strict, else recovered from the broken text, else the last one that parsed."""
        value = self.tree.value
        return value if value is not None else self.last_good_value

    def value_along(self, path: tuple[str | int, ...]) -> Any:
        """The value as far as a schema look-up along ``path`` reads it: the whole value when it
        is at hand; while the text is broken, the objects on the path with their scalar members
        (recovering a 1 MB document's whole value costs tens of milliseconds per version)."""
        if self.document.value is not None or "value" in self.tree.__dict__:
            return self.value
        root = self.tree.root
        return _spine(root, path) if root is not None else self.last_good_value

    @property
    def workflow_id(self) -> str | None:
        """The workflow's id: the strict value's, or read from the tree while the text is broken
        (so workspace-level checks keep seeing this file while its author types)."""
        value = self.document.value
        if value is None:
            found = self.tree.locate("/id")
            value = {"id": found[1].value} if found else None
        workflow_id = value.get("id") if isinstance(value, dict) else None
        return workflow_id if isinstance(workflow_id, str) else None

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A value derived from this version (computed once, dropped with the version)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    @property
    def is_json(self) -> bool:
        return detect_format(self.path) == "json"  # without parsing: completion may come first

    @property
    def is_yaml(self) -> bool:
        return detect_format(self.path) == "yaml"


def _spine(node: Node, path: tuple[str | int, ...]) -> Any:
    if node.kind == "array":
        index = path[0] if path else None
        if isinstance(index, int) and 0 <= index < len(node.items):
            return [*([None] * index), _spine(node.items[index], path[1:])]
        return []  # positions left open (-1): the look-up reads no item
    if node.kind != "object":
        return node.value
    out: dict[str, Any] = {}
    for member in node.members:
        child = member.node
        if child is None:
            continue
        if path and member.key == path[0]:
            out[member.key] = _spine(child, path[1:])
        elif child.kind == "object":
            out[member.key] = {}
        elif child.kind == "array":
            out[member.key] = []
        else:
            out[member.key] = child.value
    return out


class DocumentStates:
    def __init__(self) -> None:
        self._states: dict[str, DocumentState] = {}
        self.settings = Settings()
        self.encoding = "utf-16"
        self.config_serial = 0
        # Given each state replaced or dropped (freeing a large one is left to an idle moment).
        self.on_discard: Callable[[DocumentState], None] = lambda replaced: None

    def get(self, document: TextDocument, edited: WorkflowDocument | None = None) -> DocumentState:
        """The state of the document's current version; ``edited`` is its already parsed text.
        A state built under another project configuration than today's is built again."""
        text = document.source
        known = self._states.get(document.uri)
        path = to_fs_path(document.uri) if document.uri.startswith("file:") else None
        config = self.settings.config_of(path)
        if known is not None and known.config != config:
            self.config_serial += 1
        elif known is not None and known.version == document.version and known.text is text:
            return known
        state = DocumentState(
            document.uri,
            document.version,
            text,
            path,
            self.settings.is_workflow(path, text),
            self.encoding,
            config,
            self.config_serial,
        )
        if known is not None:
            state.last_good_value = (
                known.document.value
                if "document" in known.__dict__ and known.document.value is not None
                else known.last_good_value
            )
        if edited is not None and edited.text == text:
            state.__dict__["document"] = edited  # the cached_property's slot: no second parse
        self._states[document.uri] = state
        if known is not None:
            self.on_discard(known)
        return state

    def edited_document(self, uri: str, change: Any) -> WorkflowDocument | None:
        """The previous version's document with one incremental change applied by the engine.

        ``WorkflowDocument.with_edit`` re-parses only the edited step and keeps the others' objects,
        so the engine's per-step lint results are reused; ``None`` when that does not apply.
        """
        known = self._states.get(uri)
        if known is None or getattr(change, "range", None) is None:
            return None
        # Only from a version that was fully served (parsed and indexed, or with a tree to carry
        # on incrementally): during a burst of edits nobody reads the intermediate versions, and
        # indexing each would cost more than parsing.
        if "document" not in known.__dict__ or not (
            "line_index" in known.__dict__ or "tolerant" in known.document.__dict__
        ):
            return None
        start = known.positions.offset(change.range.start)
        end = known.positions.offset(change.range.end)
        return known.document.with_edit(start, max(start, end), change.text)

    def peek(self, uri: str) -> DocumentState | None:
        return self._states.get(uri)

    def by_path(self, path: str) -> DocumentState | None:
        return next((s for s in self._states.values() if s.path == path), None)

    def open_states(self) -> list[DocumentState]:
        return list(self._states.values())

    def drop(self, uri: str) -> None:
        dropped = self._states.pop(uri, None)
        if dropped is not None:
            self.on_discard(dropped)

    def reclassify(self, settings: Settings) -> None:
        """New settings: forget cached states so the next look-up re-decides what is a workflow."""
        self.settings = settings
        self._states = {
            uri: s
            for uri, s in self._states.items()
            if settings.is_workflow(s.path, s.text) == s.is_workflow
        }
