"""The tolerant document: a tree with spans recovered from broken JSON and YAML (``|`` = cursor)."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from workrail_engine.limits import MAX_YAML_BLOCK_LEVELS
from workrail_engine.text import tolerant_document
from workrail_engine.text.document import parse_document
from workrail_engine.text.tolerant_document import (
    parse_tolerant,
    tree_sitter_refusal,
    yaml_block_levels,
)


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


# -- YAML tree-sitter must not parse (issue 25 item 4) ---------------------------------------------

_PARSE_IN_A_CHILD = """
import sys
from tree_sitter import Language, Parser
import tree_sitter_yaml as grammar
Parser(Language(grammar.language())).parse(sys.stdin.buffer.read())
"""


def _yaml_shapes(levels: int) -> dict[str, str]:
    """Texts that open ``levels`` block levels in the ways the YAML scanner can stack them."""
    return {
        "mappings": "".join(" " * i + "a:\n" for i in range(levels)) + " " * levels + "1\n",
        "dashes on one line": "- " * levels + "1\n",
        "complex keys": "? " * levels + "a\n",
        "explicit values": "? a\n" + ": " * levels + "b\n",
        "sequences of mappings": "".join("  " * i + "- a:\n" for i in range(levels)) + "1\n",
        "keys with sequences": "".join(
            " " * (2 * i) + "k:\n" + " " * (2 * i) + "- x\n" + " " * (2 * i) + "- y:\n"
            for i in range(levels)
        ),
    }


def _crashes_tree_sitter(text: str) -> bool:
    run = subprocess.run(
        [sys.executable, "-c", _PARSE_IN_A_CHILD], input=text.encode(), capture_output=True
    )
    return run.returncode != 0


@pytest.mark.parametrize("shape", list(_yaml_shapes(1)))
def test_yaml_block_levels_refuses_what_crashes_tree_sitter_and_passes_what_does_not(shape):
    """The crash is real (a child process dies of it at 254 levels) and the count never lets it
    through; at the limit tree-sitter parses the same shape without harm."""
    crashing = _yaml_shapes(254)[shape]
    if _crashes_tree_sitter(crashing):  # some shapes crash sooner (two scanner levels per column)
        assert tree_sitter_refusal(crashing, "yaml") is not None
    levels = MAX_YAML_BLOCK_LEVELS
    while yaml_block_levels(_yaml_shapes(levels)[shape]) > MAX_YAML_BLOCK_LEVELS:
        levels -= 1
    at_limit = _yaml_shapes(levels)[shape]
    assert yaml_block_levels(at_limit) >= MAX_YAML_BLOCK_LEVELS - 3
    assert not _crashes_tree_sitter(at_limit)
    assert parse_tolerant(at_limit, "yaml").tree is not None


def test_the_254_level_file_is_refused_before_tree_sitter_in_a_child_process():
    """Run where a regression cannot take the test process down with it."""
    script = (
        "from workrail_engine.text.document import parse_document\n"
        "import sys\n"
        "document = parse_document(sys.stdin.read(), 'deep.yaml')\n"
        "tree = document.tolerant\n"
        "print(tree.tree is None, tree.root is None, tree.refusal)\n"
    )
    text = "id: x\nsteps:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(254)) + "  1\n"
    run = subprocess.run(
        [sys.executable, "-c", script], input=text, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("True True 255 indentation levels open at once"), run.stdout


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
    monkeypatch.setattr(tolerant_document, "MAX_YAML_TREE_LINES", 3)
    document = parse_document(text, "flow.yaml")
    by_strict_parse = document.tolerant
    assert by_strict_parse.tree is None and "lines" in (by_strict_parse.refusal or "")
    assert _shape(by_strict_parse) == _shape(by_tree_sitter)
    assert by_strict_parse.value == by_tree_sitter.value == document.value
    for word in ("flow", "Quoted", "two", "y]", "mode", "count"):
        offset = text.index(word) + 1
        strict, recovered = by_strict_parse.cursor(offset), by_tree_sitter.cursor(offset)
        assert (strict.path, strict.key, strict.in_key) == (
            recovered.path,
            recovered.key,
            recovered.in_key,
        ), word


def test_an_edit_across_the_limit_leaves_and_regains_tree_sitter():
    shallow = "id: x\nsteps:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(90)) + "  1\n"
    document = parse_document(shallow, "deep.yaml")
    assert document.tolerant.tree is not None
    at = len("id: x\nsteps:\n")
    deeper = "".join(" " * (i + 1) + "b:\n" for i in range(200))
    edited = document.with_edit(at, at, deeper)
    assert edited.tolerant.tree is None and edited.tolerant.root is None
    back = edited.with_edit(at, at + len(deeper), "")
    assert back.tolerant.tree is not None and back.text == shallow
