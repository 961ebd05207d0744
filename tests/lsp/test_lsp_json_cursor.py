"""The tolerant cursor reader, table-driven: ``|`` marks the cursor in (often broken) JSON."""

from __future__ import annotations

import pytest

from workrail_engine.document import LineIndex
from workrail_lsp.json_cursor import cursor_context


def at(text: str):
    offset = text.index("|")
    clean = text[:offset] + text[offset + 1 :]
    return cursor_context(LineIndex(clean), offset)


@pytest.mark.parametrize(
    ("text", "path", "in_key", "key", "token_text"),
    [
        pytest.param(
            '{"steps": [{"id": "a", "ti|',
            ("steps", 0),
            True,
            None,
            "ti",
            id="half-typed-key-unclosed-document",
        ),
        pytest.param(
            '{"steps": [{"id": "a"}, {"ti|"}]}', ("steps", 1), True, None, "ti", id="second-item"
        ),
        pytest.param(
            '{"steps": [{"onFailure": "ab|"}]}',
            ("steps", 0),
            False,
            "onFailure",
            "ab",
            id="string-value",
        ),
        pytest.param(
            '{"a": 1,\n "b": {"c": [1, 2, {"d": |',
            ("b", "c", 2),
            False,
            "d",
            "",
            id="nested-across-lines",
        ),
        pytest.param('{"a": {"x": "}{]["}, |', (), True, None, "", id="brackets-inside-strings"),
        pytest.param('{"a": "esc \\" quote", |}', (), True, None, "", id="escaped-quote"),
        pytest.param('{"a": 1 "b": |', (), False, "b", "", id="missing-comma"),
        pytest.param(
            '{"steps": [\n  {"id": "x"},\n  |\n]}',
            ("steps",),
            False,
            None,
            "",
            id="between-array-items",
        ),
        pytest.param('{"k": tr|', (), False, "k", "tr", id="literal"),
    ],
)
def test_cursor_context(text, path, in_key, key, token_text):
    context = at(text)
    assert context.path == path
    assert context.in_key is in_key
    assert context.key == key
    assert context.token_text == token_text


def test_members_of_the_object_around_the_cursor():
    context = at('{"id": "x", "type": "loop", "loop": {"type": "for"}, |, "body": "y"}')
    assert [(m.key, m.value) for m in context.members] == [
        ("id", "x"),
        ("type", "loop"),
        ("loop", "{"),
        ("body", "y"),
    ]


def test_array_position_counts_items_before_the_cursor():
    context = at('{"steps": [{}, {}, [1, [2]], "s", |')
    assert (
        context.container == "array" and context.index == 4 and context.value_path == ("steps", 4)
    )


def test_root_and_empty_text():
    assert at("|").container == "root"
    assert at("  |  ").path == ()


def test_crlf_line_breaks():
    context = at('{\r\n  "steps": [\r\n    {"id": "a",\r\n     "ti|')
    assert context.path == ("steps", 0) and context.in_key


def test_line_summaries_reused_across_versions_equal_a_fresh_read():
    import random

    from workrail_lsp import json_lines

    rng = random.Random(7)
    text = (
        '{\n  "steps": [\n'
        + ",\n".join(f'    {{"id": "s{i}", "prompt": "p {{{{x}}}} ]"}}' for i in range(60))
        + "\n  ]\n}\n"
    )
    pieces = ["\n", "{", "}", "[", "]", '"', ",", "x", ' "k": 1', "\n  {", "é"]
    previous = json_lines.text_of(LineIndex(text))
    for _ in range(300):
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.5 and at < len(text):
            text = text[:at] + text[at + rng.randrange(1, 4) :]
        else:
            text = text[:at] + rng.choice(pieces) + text[at:]
        reused = json_lines._reused_lines(previous, text)
        assert reused is not None and reused == json_lines._all_lines(text)
        previous = json_lines.text_of(LineIndex(text))
        assert previous.summaries == reused
