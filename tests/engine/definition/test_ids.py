"""One id rule: the schema, the catalog, the CLI and the MCP tools use the same patterns."""

from __future__ import annotations

import pytest

from workrail_engine.definition.ids import (
    STEP_ID_PATTERN,
    WORKFLOW_ID_PATTERN,
    is_step_id,
    is_workflow_id,
)
from workrail_engine.schema import load_schema


def test_the_schema_carries_the_same_patterns_as_the_engine():
    defs = load_schema()["$defs"]
    assert defs["workflowId"]["pattern"] == WORKFLOW_ID_PATTERN
    assert defs["stepId"]["pattern"] == STEP_ID_PATTERN
    assert (defs["workflowId"]["minLength"], defs["workflowId"]["maxLength"]) == (3, 64)


@pytest.mark.parametrize(
    "workflow_id",
    ["coding-task", "my_flow", "wr.discovery", "team.release-check", "abc", "a" * 64, "x1.y_2"],
)
def test_upstream_id_forms_are_workflow_ids(workflow_id):
    assert is_workflow_id(workflow_id)


@pytest.mark.parametrize(
    "workflow_id",
    [
        "ab",  # too short
        "a" * 65,  # too long
        "Coding-Task",  # upper case
        "wr.",  # empty name
        ".discovery",  # empty namespace
        "wr..discovery",
        "a.b.c",  # one namespace only
        "1wr.discovery",  # a namespace starts with a letter
        "wr.1discovery",
        "wr/discovery",
        "../etc",
        "wr.discovery\n",
    ],
)
def test_other_forms_are_not(workflow_id):
    assert not is_workflow_id(workflow_id)


def test_step_ids_keep_their_rule():
    assert is_step_id("review-plan")
    assert not is_step_id("review_plan")
    assert not is_step_id("wr.step")
