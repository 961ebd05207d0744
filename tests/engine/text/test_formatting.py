"""The one layout of workflow files (`workrail format`, the language server's formatting)."""

from __future__ import annotations

import json

import pytest
import yaml

from workrail_engine.text.formatting import (
    Formatted,
    format_json,
    format_text,
    try_format,
    yaml_comments,
)

YAML = """\
# Release checklist, kept by the ops team
---
id: release-flow   # the id agents use
name: 'Release'
version: "1.0.0"
tags: [ops, release]
steps:
- id: build
  title: Build
  prompt: |
    Build it.
      Keep this indented line.

    And this paragraph.
  # why the retry: the registry is flaky
  run:
      command: ["make", "dist"]
-   id: ship
    title: Ship
    prompt: >-
      folded
      text
    note: ~
"""


@pytest.mark.parametrize(
    "text",
    [
        '{"a":[],"b":{},"c":[1,2.50,1e3],"d":"x\\u00e9\\"y","e":{"f":[{"g":null}]}}',
        "[]",
        '"just a string"',
    ],
)
def test_format_json_keeps_values_order_and_spelling(text):
    formatted = format_json(text)
    assert json.loads(formatted) == json.loads(text)
    assert formatted.endswith("\n")
    assert "2.50" in formatted or "2.50" not in text
    assert format_json(formatted) == formatted  # idempotent


def test_yaml_keeps_comments_quotes_and_block_scalars_and_indents_sequences():
    formatted = format_text(YAML, "release.workflow.yaml")
    assert formatted is not None
    assert yaml.safe_load(formatted) == yaml.safe_load(YAML)
    assert formatted.startswith("# Release checklist, kept by the ops team\n---\n")
    for kept in (
        "# the id agents use",
        "# why the retry: the registry is flaky",
        "name: 'Release'",
        'version: "1.0.0"',
        "tags: [ops, release]",
        "      Keep this indented line.\n\n      And this paragraph.\n",
        "prompt: >-\n      folded\n      text\n",
    ):
        assert kept in formatted, kept
    assert "steps:\n  - id: build\n    title: Build\n" in formatted
    assert '\n    run:\n      command: ["make", "dist"]\n' in formatted
    assert "\n  - id: ship\n" in formatted and "note: null" in formatted
    assert format_text(formatted, "release.workflow.yaml") == formatted  # idempotent


@pytest.mark.parametrize(
    ("text", "path"),
    [
        pytest.param('{"id": "x",', "a.json", id="broken-json"),
        pytest.param('{"id": "x", "id": "y"}', "a.json", id="duplicate-key"),
        pytest.param("id: [x\n", "a.yaml", id="broken-yaml"),
        pytest.param("", "a.yaml", id="empty"),
    ],
)
def test_a_document_that_does_not_parse_is_left_alone(text, path):
    assert format_text(text, path) is None


def test_json_byte_order_mark_is_kept_for_its_own_fix():
    formatted = format_text('\ufeff{"id":"abc"}', "a.json")
    assert formatted == '\ufeff{\n  "id": "abc"\n}\n'


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        pytest.param(
            '{"id":"abc",\r\n"tags":[]}\r\n',
            "a.json",
            '{\r\n  "id": "abc",\r\n  "tags": []\r\n}\r\n',
            id="json",
        ),
        pytest.param(
            "id: abc\r\nsteps:\r\n- id: one\r\n  title: One\r\n",
            "a.yaml",
            "id: abc\r\nsteps:\r\n  - id: one\r\n    title: One\r\n",
            id="yaml",
        ),
    ],
)
def test_crlf_files_stay_crlf(text, path, expected):
    assert format_text(text, path) == expected


def test_yaml_comments_are_found_only_outside_scalars():
    text = (
        "%YAML 1.2 # directive\n---  # start\nid: a # after a value\ntags: [\n  one, # in a flow\n"
        "  \"two # quoted\", 'three # quoted'\n]\nprompt: |  # header\n  # block text\n  a # text\n"
        "# after the block\nplain: a#b\n...\n# after the end\n"
    )
    assert yaml_comments(text) == [
        (0, "# directive"),
        (1, "# start"),
        (2, "# after a value"),
        (4, "# in a flow"),
        (7, "# header"),
        (10, "# after the block"),
        (13, "# after the end"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("# top\nid: a  # trailing\n# between\nname: x\n", id="around-keys"),
        pytest.param("id: a\nsteps:\n- id: s\n  # inside\n- id: t\n# last\n", id="block-sequence"),
        pytest.param("id: a\nsteps:\n  - # after the dash\n    id: s\n", id="after-dash"),
        pytest.param("a:\n  b:\n    c: 1\n    # deep\n  # middle\n# top\nz: 1\n", id="dedents"),
        pytest.param("id: a\nname: # before the value\n  x\n", id="before-value"),
        pytest.param("id: a\ntags: [one, two]  # after a flow\n", id="after-flow"),
        pytest.param("a: &x 1 # anchored\nb: *x\n", id="anchor"),
        pytest.param("id: a\nname:   x\n...  # end\n\n# after the end\n", id="document-end"),
        pytest.param("id: a\r\nname:   x # c\r\n...\r\n# after\r\n", id="document-end-crlf"),
        pytest.param("id: a\np: |+\n  text\n\n# after\nq: 1\n", id="after-a-kept-block"),
        pytest.param(
            'p: "a\n  # quoted, no comment\n  b"\nq: a\n  b # c\n', id="multi-line-scalars"
        ),
        pytest.param("id: a\nt: [\n  a,\n  b\n] # after the flow\n", id="after-a-multi-line-flow"),
        pytest.param("id: a\nname: x\n# the last line", id="no-final-newline"),
    ],
)
def test_every_comment_is_kept(text):
    formatted = format_text(text, "a.yaml")
    assert formatted is not None
    assert [c for _, c in yaml_comments(formatted)] == [c for _, c in yaml_comments(text)]


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        pytest.param(
            "id: a\ntags: [\n  one, # first\n  two\n]\n",
            "the layout would drop the comment on line 3 (# first)",
            id="flow-sequence",
        ),
        pytest.param(
            "id: a\nmeta: {\n  a: 1,\n  # before b\n  b: 2\n}\n",
            "the layout would drop the comment on line 4 (# before b)",
            id="flow-mapping",
        ),
        pytest.param(
            "id: a\ns:\n- [a, # in a flow in a block\n   b]\n",
            "the layout would drop the comment on line 3 (# in a flow in a block)",
            id="flow-sequence-in-a-block-sequence",
        ),
    ],
)
def test_a_text_whose_layout_would_drop_a_comment_is_left_alone(text, refusal):
    assert try_format(text, "a.yaml") == Formatted(None, refusal)
