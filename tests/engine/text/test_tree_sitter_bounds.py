"""YAML tree-sitter must not parse (it crashes on them): refused before tree-sitter sees it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workrail_engine.limits import MAX_YAML_BLOCK_LEVELS
from workrail_engine.text.tolerant_document import parse_tolerant
from workrail_engine.text.tree_sitter_bounds import tree_sitter_refusal, yaml_block_levels

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
