"""pygls's copy of each open document, with an incremental change applied in the time of the edit.

pygls applies ``didChange`` by splitting the whole text into lines and writing every line into a
new string (~9 ms per keystroke on a 1 MB document, a quarter of our change budget). Here a
document keeps the engine's ``LineIndex`` of its text, finds the edited range by bisection, splices
the string and shifts the index (~1 ms). Line breaks are LSP's (``\\n``, ``\\r\\n``, ``\\r``); pygls's
``splitlines`` also breaks at U+2028, form feeds and others, which would put an editor's change
in the wrong place in a text containing them.

pygls has no setting for the class of its documents: ``use_edited_documents`` replaces the
workspace's factory, once ``initialize`` has created the workspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from .positions import encoding_name

if TYPE_CHECKING:  # the engine's document model loads with the first edit, not at start-up
    from workrail_engine.text.document import LineIndex

__all__ = ["EditedTextDocument", "use_edited_documents"]


class EditedTextDocument(TextDocument):
    _index: LineIndex | None = None

    def apply_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        if not (
            isinstance(change, types.TextDocumentContentChangePartial)
            and self._is_sync_kind_incremental
        ):
            super().apply_change(change)
            self._index = None
            return
        from workrail_engine.text.document import LineIndex

        text = self.source
        index = self._index if self._index is not None and self._index.text is text else None
        index = index or LineIndex(text)
        encoding = encoding_name(self.position_codec.encoding)
        start = index.offset(change.range.start.line, change.range.start.character, encoding)
        end = index.offset(change.range.end.line, change.range.end.character, encoding)
        end = max(start, end)
        self._source = text[:start] + change.text + text[end:]
        self._index = index.edited(self._source, start, end, change.text)


def use_edited_documents(workspace: Workspace) -> None:
    """Make ``workspace`` create ``EditedTextDocument`` for the documents the client opens."""
    create = workspace._create_text_document

    def create_edited(doc_uri: str, *args: Any, **kwargs: Any) -> TextDocument:
        document = create(doc_uri, *args, **kwargs)
        document.__class__ = EditedTextDocument  # same fields: only apply_change differs
        return document

    workspace._create_text_document = create_edited  # type: ignore[method-assign]
