"""Identifier rules for workflows and steps: one definition that every front end uses.

Workflow ids follow upstream WorkRail: the legacy form (lowercase letters, digits, ``-`` and
``_``) and the namespaced form ``namespace.name`` (``wr.discovery``, ``team.release-check``),
3 to 64 characters. Step ids stay lowercase letters, digits and ``-``. The patterns are written
so that JSON Schema, RE2, Python's ``re`` and pydantic all read them the same way; the schema
file repeats them and a test holds the two equal.
"""

from __future__ import annotations

import re

__all__ = [
    "ID_MAX_LENGTH",
    "ID_MIN_LENGTH",
    "SERVED_STEP_ID_MAX_LENGTH",
    "SERVED_STEP_ID_PATTERN",
    "STEP_ID_PATTERN",
    "WORKFLOW_ID_PATTERN",
    "WORKFLOW_ID_RULE",
    "is_step_id",
    "is_workflow_id",
]

WORKFLOW_ID_PATTERN = r"^(?:[a-z0-9_-]+|[a-z][a-z0-9_-]+\.[a-z][a-z0-9_-]+)$"
STEP_ID_PATTERN = r"^[a-z0-9-]+$"
ID_MIN_LENGTH = 3
ID_MAX_LENGTH = 64
# A step the compile step injected from a routine is "<calling step>.<routine step>".
SERVED_STEP_ID_PATTERN = r"^[a-z0-9-]+(?:\.[a-z0-9-]+)?$"
SERVED_STEP_ID_MAX_LENGTH = 2 * ID_MAX_LENGTH + 1
# How the workflow id rule is worded for people (usage errors, tool descriptions).
WORKFLOW_ID_RULE = (
    "lowercase letters, digits, '-' and '_', optionally namespaced as 'namespace.name' "
    "(e.g. 'wr.discovery'), 3-64 characters"
)

# fullmatch, not match: in Python `$` also matches before a final newline.
_WORKFLOW_ID = re.compile(WORKFLOW_ID_PATTERN)
_STEP_ID = re.compile(STEP_ID_PATTERN)


def is_workflow_id(text: str) -> bool:
    return ID_MIN_LENGTH <= len(text) <= ID_MAX_LENGTH and _WORKFLOW_ID.fullmatch(text) is not None


def is_step_id(text: str) -> bool:
    return ID_MIN_LENGTH <= len(text) <= ID_MAX_LENGTH and _STEP_ID.fullmatch(text) is not None
