"""Placing a finding inside a string: the offsets of its characters in the text as written."""

from __future__ import annotations

import json

from tests.engine.lint.lint_workflows import lint, mutate, set_at
from workrail_engine.lint import lint_text


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
