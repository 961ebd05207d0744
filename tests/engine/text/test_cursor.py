"""Where an offset is in a document's structure, broken or not (``|`` = cursor)."""

from __future__ import annotations

import pytest

from workrail_engine.text.tolerant_document import parse_tolerant


def at(text: str, fmt: str = "json"):
    offset = text.index("|")
    clean = text[:offset] + text[offset + 1 :]
    return parse_tolerant(clean, fmt).cursor(offset)


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
        pytest.param(
            '{"steps": [{"id": "a",\n "ag|\n}, {"id": "b"}]}',
            ("steps", 0),
            True,
            None,
            "ag",
            id="half-typed-key-mid-document",
        ),
    ],
)
def test_json_cursor(text, path, in_key, key, token_text):
    context = at(text)
    assert context.path == path
    assert context.in_key is in_key
    assert context.key == key
    assert context.token_text == token_text


@pytest.mark.parametrize(
    ("text", "path", "in_key", "key", "token_text"),
    [
        pytest.param(
            "id: x\nsteps:\n  - id: a\n    ti|\n  - id: b\n",
            ("steps", 0),
            True,
            None,
            "ti",
            id="half-typed-key",
        ),
        pytest.param(
            "id: x\nsteps:\n  - id: a\n    |\n", ("steps", 0), True, None, "", id="empty-line"
        ),
        pytest.param(
            "id: x\nsteps:\n  - id: a\n    onFailure: ab|\n",
            ("steps", 0),
            False,
            "onFailure",
            "ab",
            id="value",
        ),
        pytest.param("id: x\n|\n", (), True, None, "", id="top-level-key"),
        pytest.param(
            "id: x\nsteps:\n  - id: a\n    runCondition:\n      |\n",
            ("steps", 0, "runCondition"),
            True,
            None,
            "",
            id="under-a-key-without-value",
        ),
    ],
)
def test_yaml_cursor(text, path, in_key, key, token_text):
    context = at(text, "yaml")
    assert context.path == path
    assert context.in_key is in_key
    assert context.key == key
    assert context.token_text == token_text


def test_members_of_the_object_around_the_cursor():
    context = at('{"id": "x", "type": "loop", "loop": {"type": "for"}, |, "body": "y"}')
    assert [
        (m.key, m.node.kind if m.node.is_container else m.node.value) for m in context.members
    ] == [
        ("id", "x"),
        ("type", "loop"),
        ("loop", "object"),
        ("body", "y"),
    ]


def test_array_position_counts_items_before_the_cursor():
    context = at('{"steps": [{}, {}, [1, [2]], "s", |')
    assert context.container == "array" and context.index == 4
    assert context.value_path == ("steps", 4)


def test_root_and_empty_text():
    assert at("|").container == "root"
    assert at("  |  ").path == ()


def test_crlf_line_breaks():
    context = at('{\r\n  "steps": [\r\n    {"id": "a",\r\n     "ti|')
    assert context.path == ("steps", 0) and context.in_key


def test_yaml_cursor_just_after_a_dash_is_in_a_new_item():
    context = at("id: x\nsteps:\n  - id: a\n  - |\n", "yaml")
    assert context.path == ("steps", 1) and context.in_key
