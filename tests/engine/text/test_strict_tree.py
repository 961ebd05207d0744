"""The tree of the strict parse, for YAML tree-sitter must not parse: the same as tree-sitter's."""

from __future__ import annotations

from tests.engine.text.tree_shapes import tree_shape
from workrail_engine.text import tree_sitter_bounds
from workrail_engine.text.document import parse_document


def test_long_yaml_gets_the_tree_of_its_strict_parse(monkeypatch):
    """Past MAX_YAML_TREE_LINES the tree is built from the strict parse's spans: the same nodes,
    spans and keys tree-sitter gives for the same text (compared here on a short text with the
    line limit lowered)."""
    text = (
        "id: flow  # a comment\nname: 'Quoted'\nsteps:\n"
        "  - id: a\n    prompt: |\n      two\n      lines\n    guidance: [x, y]\n"
        "  - id: b\n    runCondition: {var: mode, equals: fast}\n    count: 3\n"
    )
    by_tree_sitter = parse_document(text, "flow.yaml").tolerant
    monkeypatch.setattr(tree_sitter_bounds, "MAX_YAML_TREE_LINES", 3)
    document = parse_document(text, "flow.yaml")
    by_strict_parse = document.tolerant
    assert by_strict_parse.tree is None and "lines" in (by_strict_parse.refusal or "")
    assert tree_shape(by_strict_parse) == tree_shape(by_tree_sitter)
    assert by_strict_parse.value == by_tree_sitter.value == document.value
    for word in ("flow", "Quoted", "two", "y]", "mode", "count"):
        offset = text.index(word) + 1
        strict, recovered = by_strict_parse.cursor(offset), by_tree_sitter.cursor(offset)
        assert (strict.path, strict.key, strict.in_key) == (
            recovered.path,
            recovered.key,
            recovered.in_key,
        ), word
