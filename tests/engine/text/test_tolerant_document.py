"""The tolerant document: one text version's tree, its edits, and pointer and offset look-ups (``|`` = cursor)."""

from __future__ import annotations

import random

import pytest

from tests.engine.text.tree_shapes import tree_shape
from workrail_engine.text.document import parse_document
from workrail_engine.text.tolerant_document import parse_tolerant


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
        assert tree_shape(document) == tree_shape(parse_tolerant(text, fmt))


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
