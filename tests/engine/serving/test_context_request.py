"""The paragraph a step with `sets` ends with (`step_prompt.context_request`): each variable, its
description, what it may be, and what leaving out an optional one means; through the servers in
tests/mcp/test_session_parity.py and `workrail next` in tests/cli/test_catalog_commands_cli.py."""

from __future__ import annotations

from workrail_engine.serving.step_prompt import context_request

DECLARED = {
    "context": {
        "size": {"type": "string", "enum": ["small", "large"], "description": "How big"},
        "risk": {"type": "number", "minimum": 0, "maximum": 1},
        "lines": {"type": "integer", "minimum": 0},
        "files": {"type": "array", "items": {"type": "string"}},
        "reviewed": {"type": "boolean", "default": False},
    }
}


def test_each_variable_with_what_it_may_be():
    step = {"id": "s", "sets": ["size", "risk", "lines", "files", "reviewed", "other"]}
    assert context_request(DECLARED, step).splitlines() == [
        "Set these context variables when you answer this step:",
        '- size (How big): one of "small", "large"',
        "- risk: a number from 0 to 1",
        "- lines: an integer of at least 0",
        "- files: a list of strings",
        "- reviewed: true or false (false if you leave it out)",
        "- other",
    ]


def test_no_sets_no_paragraph():
    assert context_request(DECLARED, {"id": "s"}) == ""
