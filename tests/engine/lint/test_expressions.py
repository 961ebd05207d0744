"""Conditions and validation criteria (WR4xx)."""

from __future__ import annotations

import gc
from pathlib import Path

from tests.engine.lint.lint_workflows import bad_and_good, check_bad_and_good, set_at
from workrail_engine.lint import lint_path

# code, bad change, good change, text the diagnostic must sit on
CASES = [
    (
        "WR401",
        set_at(["steps", 2, "runCondition"], {"var": "target", "matches": "(a"}),
        set_at(["steps", 2, "runCondition"], {"var": "target", "matches": "(a)"}),
        '"(a"',
    ),
    (
        "WR402",
        set_at(["steps", 2, "runCondition"], {"var": "target", "gt": "5"}),
        set_at(["steps", 2, "runCondition"], {"var": "target", "gt": 5}),
        '"5"',
    ),
    (
        "WR403",
        set_at(
            ["steps", 0, "validationCriteria"],
            {"type": "schema", "schema": {"type": "nope"}, "message": "m"},
        ),
        set_at(
            ["steps", 0, "validationCriteria"],
            {"type": "schema", "schema": {"type": "object"}, "message": "m"},
        ),
        None,
    ),
    (
        "WR404",
        set_at(
            ["steps", 0, "validationCriteria"],
            {"type": "length", "min": 9, "max": 2, "message": "m"},
        ),
        set_at(
            ["steps", 0, "validationCriteria"],
            {"type": "length", "min": 2, "max": 9, "message": "m"},
        ),
        "9",
    ),
    (
        "WR406",
        set_at(
            ["parameters"],
            {"type": "object", "properties": {"target": {"$ref": "https://example.com/p.json"}}},
        ),
        set_at(
            ["parameters"],
            {
                "type": "object",
                "properties": {"target": {"$ref": "#/$defs/target"}},
                "$defs": {"target": {"type": "string"}},
            },
        ),
        '"https://example.com/p.json"',
    ),
    (
        "WR406",
        set_at(
            ["steps", 0, "validationCriteria"],
            {"type": "schema", "schema": {"$ref": "file:///etc/passwd"}, "message": "m"},
        ),
        set_at(
            ["steps", 0, "validationCriteria"],
            {"type": "schema", "schema": {"type": "object"}, "message": "m"},
        ),
        '"file:///etc/passwd"',
    ),
    (
        "WR405",
        set_at(
            ["steps", 0, "validationCriteria"],
            {"type": "regex", "pattern": "^(?!.*TODO)", "message": "m"},
        ),
        set_at(
            ["steps", 0, "validationCriteria"],
            {"not": {"type": "contains", "value": "TODO", "message": "m"}, "message": "m"},
        ),
        '"^(?!.*TODO)"',
    ),
    (
        "WR407",
        set_at(["steps", 0, "validationCriteria"], []),
        set_at(["steps", 0, "validationCriteria"], [{"type": "length", "min": 1, "message": ""}]),
        "[]",
    ),
    (
        "WR408",
        set_at(["steps", 0, "validationCriteria"], [{"type": "contains", "message": "Say it"}]),
        set_at(
            ["steps", 0, "validationCriteria"], [{"type": "contains", "value": "it", "message": ""}]
        ),
        '{\n          "type": "contains",\n          "message": "Say it"\n        }',
    ),
    (
        "WR409",
        set_at(
            ["steps", 0, "validationCriteria"],
            [{"type": "contains", "value": "init", "message": 'Send \'{"state": "init"}\''}],
        ),
        set_at(
            ["steps", 0, "validationCriteria"],
            [{"type": "contains", "value": "init", "message": "Set the state to init"}],
        ),
        None,
    ),
]


@bad_and_good(CASES)
def test_code_bad_and_good(code, bad, good, on_text):
    check_bad_and_good(code, bad, good, on_text)


def test_linting_leaves_nothing_for_the_cyclic_collector() -> None:
    """Every object a check makes is freed when its count drops: `workrail validate` pauses the
    cyclic collector, and 1,000 files' walks of conditions left 120,000 objects in cycles."""
    bundled = sorted((Path(__file__).resolve().parents[3] / "workflows").glob("*.json"))
    for path in bundled:  # the first time fills the caches (compiled regexes, schemas)
        lint_path(path)
    gc.collect()
    gc.disable()
    try:
        for path in bundled:
            lint_path(path)
        left_in_cycles = gc.collect()
    finally:
        gc.enable()
    assert bundled and left_in_cycles == 0
