"""Placing a finding inside a string: the offsets of its characters in the text as written."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.lint.lint_workflows import lint, mutate, set_at
from workrail_engine.lint import lint_text
from workrail_engine.lint.strings import _json_offsets


def test_reference_inside_string_with_escapes_is_placed_exactly():
    text = json.dumps(mutate(set_at(["steps", 0, "prompt"], 'Say "hi"\n then {{parameters.nope}}')))
    result = lint_text(text, "demo.json")
    [bad] = [d for d in result.diagnostics if d.code == "WR303"]
    assert text[bad.span.start : bad.span.end] == "{{parameters.nope}}"


def test_many_findings_in_one_string_are_each_placed_on_their_own_text():
    """One offset table per string (it used to be rebuilt per finding): spans stay exact."""
    prompt = " ".join(f"{{{{parameters.nope{i}}}}} \u00e9" for i in range(50))
    result = lint(mutate(set_at(["steps", 0, "prompt"], json.loads(f'"{prompt}"'))))
    text = result.document.text
    placed = [text[d.span.start : d.span.end] for d in result.diagnostics if d.code == "WR303"]
    assert placed == [f"{{{{parameters.nope{i}}}}}" for i in range(50)]


@settings(max_examples=300)
@given(text=st.text(), ascii_only=st.booleans())
def test_each_decoded_character_maps_to_the_escape_or_character_written_for_it(
    text: str, ascii_only: bool
) -> None:
    """Offsets of a JSON string as any writer may spell it (escapes, surrogate pairs, raw
    characters): the text between two offsets decodes to exactly that one character."""
    raw = json.dumps(text, ensure_ascii=ascii_only)
    offsets = _json_offsets(raw)
    assert len(offsets) == len(text) + 1 and offsets[-1] == len(raw) - 1
    written = [raw[start:end] for start, end in itertools.pairwise(offsets)]
    assert [json.loads(f'"{piece}"') for piece in written] == list(text)
