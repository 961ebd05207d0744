"""The tolerant document: a tree with spans recovered from broken JSON and YAML (``|`` = cursor)."""

from __future__ import annotations

import json
import random

import pytest

from workrail_engine.tolerant_document import parse_tolerant


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


def test_spans_are_characters_not_bytes():
    text = '{"title": "plän 🚀", "id": "x"}'
    document = parse_tolerant(text)
    span = document.value_span("/id")
    assert text[span.start : span.end] == '"x"'


def _shape(document, node=None, out=None):
    """Every node's kind and span, and every member's key span, in a comparable form."""
    out = [] if out is None else out
    node = document.root if node is None else node
    if node is None:
        return out
    out.append((node.kind, node.start, node.end))
    if node.kind == "object":
        for m in node.members:
            out.append((m.key, m.key_start, m.key_end))
            if m.node is not None:
                _shape(document, m.node, out)
    elif node.kind == "array":
        for item in node.items:
            _shape(document, item, out)
    return out


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_incremental_reparse_equals_a_fresh_parse(fmt):
    rng = random.Random(11)
    if fmt == "json":
        text = (
            '{\n  "steps": [\n'
            + ",\n".join(f'    {{"id": "s{i}", "prompt": "p é {{{{x}}}} ]"}}' for i in range(40))
            + "\n  ]\n}\n"
        )
        pieces = ["\n", "{", "}", "[", "]", '"', ",", "x", ' "k": 1', "é", "🚀"]
    else:
        text = "steps:\n" + "".join(f"  - id: s{i}\n    prompt: p é {i}\n" for i in range(40))
        pieces = ["\n", "  ", "- ", ": ", "x", "é", "#", "'"]
    document = parse_tolerant(text, fmt)
    for _ in range(200):
        start = rng.randrange(len(text) + 1)
        end = min(len(text), start + rng.randrange(0, 4)) if rng.random() < 0.5 else start
        new = "" if end > start and rng.random() < 0.5 else rng.choice(pieces)
        document = document.edited(start, end, new)
        text = text[:start] + new + text[end:]
        assert document.text == text
        assert _shape(document) == _shape(parse_tolerant(text, fmt))


@pytest.mark.parametrize(
    "text",
    [
        '{"steps": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "|d"}, {"id": "e"}]}',
        '{"steps": [{"id": "a"}, /* note */ {"id": "b"}, {"id": "c"}, {"id": "|d"}]}',
        '{"steps": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "|d"}, {"id": ]}',
    ],
    ids=["well-formed", "with-a-comment", "with-an-error"],
)
def test_the_path_through_an_array_counts_items(text):
    offset = text.index("|")
    document = parse_tolerant(text[:offset] + text[offset + 1 :])
    steps = [step for step, _ in document.node_at(offset)]
    assert steps[:3] == [None, "steps", 3]
    assert document.cursor(offset).path == ("steps", 3)


def test_yaml_cursor_just_after_a_dash_is_in_a_new_item():
    context = at("id: x\nsteps:\n  - id: a\n  - |\n", "yaml")
    assert context.path == ("steps", 1) and context.in_key
