"""The tolerant tree of YAML, read from tree-sitter-yaml's tree."""

from __future__ import annotations

from workrail_engine.text.tolerant_document import parse_tolerant


def test_yaml_tree_has_spans_and_values_and_survives_a_half_typed_key():
    text = "id: w  # comment\nsteps:\n  - id: a\n    ti\n    prompt: 'it''s'\n  - id: b\n    count: 3\n"
    document = parse_tolerant(text, "yaml")
    assert document.value["id"] == "w"
    assert [s["id"] for s in document.value["steps"]] == ["a", "b"]
    assert document.value["steps"][1]["count"] == 3
    span = document.value_span("/steps/1/id")
    assert text[span.start : span.end] == "b"
    span = document.key_span("/steps/1/count")
    assert text[span.start : span.end] == "count"
