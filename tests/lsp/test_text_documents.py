"""pygls's document copy with edits applied by the engine's LineIndex: the same text as pygls's own
way for every edit an editor sends, and LSP's line breaks where pygls's differ."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from workrail_lsp.fast_start.handshake import initialized_server
from workrail_lsp.text_documents import EditedTextDocument

ENCODINGS = {
    "utf-8": types.PositionEncodingKind.Utf8,
    "utf-16": types.PositionEncodingKind.Utf16,
    "utf-32": types.PositionEncodingKind.Utf32,
}
# No U+2028, form feed and the like: pygls breaks lines there and LSP does not (tested below).
PIECES = ["a", "bc", " ", '"', "{", "é", "日本", "😀", "\n", "\r\n", "\r", "  \n", ""]


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text.encode("utf-8")) if encoding == "utf-8" else len(text)


def _position(text: str, offset: int, encoding: str) -> types.Position:
    before = text[:offset]
    line_start = max(before.rfind("\n"), before.rfind("\r")) + 1
    if before.endswith("\r") and text[offset : offset + 1] == "\n":
        offset -= 1  # between \r and \n is no position: use the one before the \r
        before = text[:offset]
        line_start = max(before.rfind("\n"), before.rfind("\r")) + 1
    line = sum(
        1 for i, c in enumerate(before) if c == "\n" or (c == "\r" and text[i + 1 : i + 2] != "\n")
    )
    return types.Position(line, _units(text[line_start:offset], encoding))


def _documents(text: str, encoding: str) -> tuple[TextDocument, EditedTextDocument]:
    codec = PositionCodec(encoding=ENCODINGS[encoding])
    pygls_own = TextDocument("file:///a.json", text, position_codec=codec)
    ours = EditedTextDocument("file:///a.json", text, position_codec=codec)
    return pygls_own, ours


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_random_edits_give_the_text_pygls_gives(encoding):
    rng = random.Random(11)
    text = "".join(rng.choice(PIECES) for _ in range(200))
    pygls_own, ours = _documents(text, encoding)
    for _ in range(400):
        current = ours.source
        start = rng.randrange(len(current) + 1)
        end = min(len(current), start + rng.choice([0, 0, 1, 2, 5, 40]))
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                _position(current, start, encoding), _position(current, end, encoding)
            ),
            text="".join(rng.choice(PIECES) for _ in range(rng.randrange(4))),
        )
        pygls_own.apply_change(change)
        ours.apply_change(change)
        assert ours.source == pygls_own.source, change


def test_an_edit_after_the_last_line_appends_as_pygls_does():
    pygls_own, ours = _documents("a\nb\n", "utf-16")
    end = types.Position(2, 0)
    change = types.TextDocumentContentChangePartial(range=types.Range(end, end), text="c")
    pygls_own.apply_change(change)
    ours.apply_change(change)
    assert ours.source == pygls_own.source == "a\nb\nc"


def test_a_whole_document_change_replaces_the_text():
    _, ours = _documents("a\nb", "utf-16")
    ours.apply_change(types.TextDocumentContentChangeWholeDocument(text="x\ny"))
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(1, 0), types.Position(1, 1)), text="z"
    )
    ours.apply_change(change)  # the index of the old text is not reused
    assert ours.source == "x\nz"


def test_lines_break_where_lsp_says_not_at_unicode_separators():
    """LSP's line breaks are \\n, \\r\\n and \\r; pygls's splitlines also breaks at U+2028."""
    _, ours = _documents('{"a": "x\u2028y",\n"b": 1}', "utf-16")
    start = types.Position(1, 0)  # the start of `"b"`, the line after the \n
    ours.apply_change(
        types.TextDocumentContentChangePartial(range=types.Range(start, start), text="  ")
    )
    assert ours.source == '{"a": "x\u2028y",\n  "b": 1}'


def test_the_server_keeps_opened_documents_as_edited_documents():
    server, _ = initialized_server({})
    uri = "file:///tmp/flow.workflow.json"
    server.workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="json", version=1, text="{}")
    )
    assert type(server.workspace.get_text_document(uri)) is EditedTextDocument
