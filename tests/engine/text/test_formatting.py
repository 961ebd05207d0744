"""The one layout of workflow files (`workrail format`, the language server's formatting)."""

from __future__ import annotations

import json

import pytest
import yaml

from workrail_engine.text.formatting import format_json, format_text

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
