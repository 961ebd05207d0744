"""Hover over the real protocol: schema text, step references, template producers, conditions."""

from __future__ import annotations

import pytest

from tests.lsp.test_lsp_completion import DECLARED_HEAD

pytestmark = pytest.mark.asyncio(loop_scope="module")

WORKFLOW = """{
  "id": "hover-flow",
  "name": "Hover",
  "steps": [
    {"id": "plan", "title": "Make a plän", "prompt": "Write the plan 🚀", "runCondition": {"and": [{"var": "mode", "equals": "full"}, {"var": "size", "gt": 3}]}},
    {"id": "build", "title": "Build", "prompt": "Follow {{steps.plan.output}} now", "onFailure": "abort", "run": {"command": ["make"]}},
    {"id": "again", "type": "loop", "loop": {"type": "for", "count": 2}, "body": "plan"}
  ]
}
"""


async def hover_at(session, name, marker_before):
    """Hover with the cursor placed just before the first occurrence of ``marker_before``."""
    at = WORKFLOW.index(marker_before)
    clean, position = session.position(WORKFLOW[:at] + "|" + WORKFLOW[at:])
    uri = session.open(name, clean)
    return await session.hover(uri, position)


async def test_hover_on_a_key_shows_the_schema_description(session):
    text = await hover_at(session, "h1.workflow.json", 'itle": "Make')
    assert text is not None and "**" in text and "title" in text.lower()


async def test_hover_on_a_loop_body_shows_the_step(session):
    text = await hover_at(session, "h2.workflow.json", 'lan"}\n  ]')
    assert "Make a plän" in text and "Write the plan" in text


async def test_hover_on_a_step_output_reference_shows_its_producer(session):
    text = await hover_at(session, "h3.workflow.json", "plan.output}}")
    assert "Make a plän" in text and "plan" in text


async def test_hover_on_a_condition_reads_it_in_plain_english(session):
    text = await hover_at(session, "h4.workflow.json", 'runCondition"')
    assert "Runs when:" in text and "mode" in text and "size" in text


async def test_hover_on_an_enum_value_explains_it(session):
    text = await hover_at(session, "h5.workflow.json", 'bort"')
    assert "abort" in text


async def test_no_hover_on_whitespace(session):
    text = await hover_at(session, "h6.workflow.json", '  "steps"')
    assert text is None


BLOCKS = """{
  "id": "hover-blocks",
  "name": "Blocks",
  "extensionPoints": [{"slotId": "checker", "purpose": "who checks", "default": "team-check"}],
  "steps": [
    {"id": "plan", "title": "Plan", "promptBlocks": {"goal": "Plan it for {{wr.bindings.checker}}", "procedure": ["Read", "Write"]}},
    {"id": "call", "title": "Call", "templateCall": {"templateId": "wr.templates.routine.absent"}}
  ]
}
"""


async def test_hover_on_prompt_blocks_shows_the_compiled_prompt(session):
    at = BLOCKS.index('promptBlocks"')
    clean, position = session.position(BLOCKS[:at] + "|" + BLOCKS[at:])
    text = await session.hover(session.open("h7.workflow.json", clean), position)
    assert "Served to the agent as:" in text
    assert "## Goal\nPlan it for team-check\n\n## Procedure\n1. Read\n2. Write" in text


async def test_hover_on_a_template_call_without_its_routine_says_why_it_is_not_served(session):
    at = BLOCKS.index('templateCall"')
    clean, position = session.position(BLOCKS[:at] + "|" + BLOCKS[at:])
    text = await session.hover(session.open("h8.workflow.json", clean), position)
    assert "**Not served:** WR801" in text


DECLARED = (
    DECLARED_HEAD
    + '    {"id": "b", "title": "B", "prompt": "Size: {{taskSize}}",'
    + ' "runCondition": {"var": "taskSize", "equals": "large"}}\n  ]\n}\n'
)


@pytest.mark.parametrize(
    "marker", ['taskSize"]', "taskSize}}", 'taskSize", "equals'], ids=["sets", "template", "var"]
)
async def test_hover_on_a_declared_variable_shows_its_description_and_values(session, marker):
    at = DECLARED.index(marker)
    clean, position = session.position(DECLARED[:at] + "|" + DECLARED[at:])
    uri = session.open(f"declared-{len(marker)}.workflow.json", clean)
    text = await session.hover(uri, position)
    assert text is not None and "**Context variable `taskSize`** (declared in `context`)" in text
    assert "How big" in text and 'Allowed values: `"small"`, `"large"`' in text
