"""Containers rebuilt from broken JSON: the value and the spans around the error survive."""

from __future__ import annotations

import json

import pytest

from workrail_engine.text.tolerant_document import parse_tolerant

BROKEN = [
    # (broken text, what the recovered value still holds)
    ('{"id": "w", "steps": [{"id": "a",\n "ag\n}, {"id": "b"}]}', ["a", "b"]),
    ('{"id": "w", "steps": [{"id": "a"} {"id": "b"}]}', ["a", "b"]),
    ('{"id": "w", "steps": [{"id": "a"}, {"id": "b"', ["a", "b"]),
    ('{"id": "w", "steps": [{"id": "a", "title": "unterminated}, {"id": "b"}]}', ["a"]),
    ('{"id": "w", "steps": [{"id": "a", "prompt": }, {"id": "b"}]}', ["a", "b"]),
]


@pytest.mark.parametrize(("text", "ids"), BROKEN)
def test_a_value_is_recovered_from_broken_json(text, ids):
    with pytest.raises(ValueError):
        json.loads(text)
    document = parse_tolerant(text)
    value = document.value
    assert value["id"] == "w"
    assert [s.get("id") for s in value["steps"]][: len(ids)] == ids
    span = document.value_span("/steps/0/id")
    assert span is not None and text[span.start : span.end] == '"a"'
