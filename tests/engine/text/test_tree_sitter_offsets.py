"""tree-sitter's byte positions become the tree's character offsets."""

from __future__ import annotations

from workrail_engine.text.tolerant_document import parse_tolerant


def test_spans_are_characters_not_bytes():
    text = '{"title": "plän 🚀", "id": "x"}'
    document = parse_tolerant(text)
    span = document.value_span("/id")
    assert text[span.start : span.end] == '"x"'
