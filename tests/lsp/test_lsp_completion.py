"""Completion over the real protocol, cursor marked with ``|``, in broken documents too."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")

WORKFLOW_HEAD = """{
  "id": "demo-flow",
  "name": "Demo",
  "parameters": {"type": "object", "properties": {"target": {"type": "string", "description": "What to build"}}},
  "secrets": ["API_TOKEN"],
  "steps": [
    {"id": "plan", "title": "Plan", "prompt": "Plan it", "runCondition": {"var": "mode", "equals": "full"}},
"""


async def items_at(session, name, text):
    clean, position = session.position(text)
    uri = session.open(name, clean)
    return {item.label: item for item in await session.completion(uri, position)}


async def test_keys_of_a_step_in_a_broken_document(session):
    # No closing quote, no closing braces: the strict parser fails, completion still works.
    text = WORKFLOW_HEAD + '    {"id": "build", "ti|'
    found = await items_at(session, "keys.workflow.json", text)
    assert {"title", "prompt", "runCondition", "validationCriteria"} <= set(found)
    assert "id" not in found  # already present
    edit = found["title"].text_edit
    assert edit.new_text.startswith('"title": "')
    assert found["prompt"].documentation is not None


async def test_new_step_snippets_carry_required_properties(session):
    text = WORKFLOW_HEAD + "    |\n  ]\n}\n"
    found = await items_at(session, "newstep.workflow.json", text)
    body = json.loads(_plain(found["prompt step"].text_edit.new_text))
    assert {"id", "title", "prompt"} <= set(body)
    loop = json.loads(_plain(found["loop"].text_edit.new_text))
    assert {"id", "type", "loop", "body"} <= set(loop)


async def test_empty_object_offers_all_required_properties(session):
    text = WORKFLOW_HEAD + "    {|}\n  ]\n}\n"
    found = await items_at(session, "required.workflow.json", text)
    required = found["required properties"].text_edit.new_text
    assert '"id"' in required and '"title"' in required and '"prompt"' in required


async def test_enum_values(session):
    text = (
        WORKFLOW_HEAD
        + '    {"id": "run-tests", "run": {"command": ["pytest"]}, "onFailure": "|"}\n  ]\n}\n'
    )
    found = await items_at(session, "enum.workflow.json", text)
    assert {"abort", "continue", "retry"} <= set(found)
    assert found["abort"].text_edit.new_text == '"abort"'


async def test_condition_operators(session):
    text = (
        WORKFLOW_HEAD
        + '    {"id": "b", "title": "B", "prompt": "p", "runCondition": {"var": "mode", |}}\n  ]\n}\n'
    )
    found = await items_at(session, "operators.workflow.json", text)
    assert {"equals", "not_equals", "gt", "in", "matches"} <= set(found)
    assert "var" not in found


async def test_context_variables_where_var_is_expected(session):
    text = (
        WORKFLOW_HEAD
        + '    {"id": "b", "title": "B", "prompt": "p", "runCondition": {"var": "|"}}\n  ]\n}\n'
    )
    found = await items_at(session, "var.workflow.json", text)
    assert "mode" in found


async def test_step_ids_for_a_loop_body(session):
    text = (
        WORKFLOW_HEAD
        + '    {"id": "again", "type": "loop", "loop": {"type": "for", "count": 2}, "body": "|"}\n  ]\n}\n'
    )
    found = await items_at(session, "body.workflow.json", text)
    assert "plan" in found and "again" not in found
    assert found["plan"].detail == "Plan"


async def test_template_references_inside_prompts(session):
    text = WORKFLOW_HEAD + '    {"id": "b", "title": "B", "prompt": "Use {{|"}\n  ]\n}\n'
    found = await items_at(session, "template.workflow.json", text)
    assert {"parameters.target", "steps.plan.output", "secrets.API_TOKEN", "context.mode"} <= set(
        found
    )
    assert found["steps.plan.output"].text_edit.new_text == "steps.plan.output}}"


async def test_template_references_inside_argv(session):
    text = WORKFLOW_HEAD + '    {"id": "b", "run": {"command": ["echo", "{{ ste|}}"]}}\n  ]\n}\n'
    found = await items_at(session, "argv.workflow.json", text)
    assert found["steps.plan.output"].text_edit.new_text == "steps.plan.output"


def _plain(snippet: str) -> str:
    import re

    text = re.sub(r"\$\{\d+\|([^,|]*)[^}]*\}", r"\1", snippet)
    text = re.sub(r"\$\{\d+:([^}]*)\}", r"\1", text)
    return re.sub(r"\$\d+", "", text)


async def test_a_key_inserted_before_another_member_gets_a_comma(session):
    text = WORKFLOW_HEAD + '    {"id": "b",\n     |\n     "title": "B"}\n  ]\n}\n'
    found = await items_at(session, "comma.workflow.json", text)
    assert found["prompt"].text_edit.new_text.endswith(",")
    text = WORKFLOW_HEAD + '    {"id": "b", "title": "B", |}\n  ]\n}\n'
    found = await items_at(session, "nocomma.workflow.json", text)
    assert not found["prompt"].text_edit.new_text.endswith(",")


async def test_an_empty_condition_offers_compositions_and_comparisons(session):
    text = (
        WORKFLOW_HEAD
        + '    {"id": "b", "title": "B", "prompt": "p", "runCondition": {|}}\n  ]\n}\n'
    )
    found = await items_at(session, "emptycond.workflow.json", text)
    assert {"and", "or", "not", "var", "equals"} <= set(found)


async def test_a_quote_not_closed_yet_gets_ranges_on_the_cursor_line(session):
    # The unclosed string reads as a token up to the next quote, a line below; LSP wants each
    # item's range on the cursor's line (VS Code drops the others: "No suggestions.").
    text = (
        WORKFLOW_HEAD
        + '    {\n      "id": "build",\n      "|\n      "prompt": "Build it"\n    }\n  ]\n}\n'
    )
    clean, position = session.position(text)
    uri = session.open("unclosed.workflow.json", clean)
    items = await session.completion(uri, position)
    assert "validationCriteria" in {item.label for item in items}
    for item in items:
        edit = item.text_edit
        assert edit.range.start.line == edit.range.end.line == position.line, item
        assert edit.range.start.character <= position.character <= edit.range.end.character, item


DECLARED_HEAD = """{
  "id": "sized-flow",
  "name": "Sized",
  "context": {"taskSize": {"type": "string", "enum": ["small", "large"], "description": "How big"}},
  "steps": [
    {"id": "plan", "title": "Plan", "prompt": "Plan it", "sets": ["taskSize"]},
"""


async def declared_items(session, name, step):
    """Completion items in ``step`` (its JSON text, the cursor marked), the second step of a
    workflow that declares `taskSize`."""
    return await items_at(session, name, DECLARED_HEAD + f"    {step}\n  ]\n}}\n")


async def test_declared_variables_and_their_values_where_they_are_read(session):
    in_var = await declared_items(
        session,
        "declared-var.workflow.json",
        '{"id": "b", "title": "B", "prompt": "p", "runCondition": {"var": "|"}}',
    )
    assert in_var["taskSize"].detail == "declared context variable"
    assert 'Allowed values: `"small"`, `"large"`' in in_var["taskSize"].documentation.value
    in_equals = await declared_items(
        session,
        "declared-equals.workflow.json",
        '{"id": "b", "title": "B", "prompt": "p", "runCondition": {"var": "taskSize", "equals": "|"}}',
    )
    assert {"small", "large"} <= set(in_equals)
    assert in_equals["large"].text_edit.new_text == '"large"'
    in_reads = await declared_items(
        session,
        "declared-reads.workflow.json",
        '{"id": "b", "title": "B", "prompt": "p", "reads": ["|"]}',
    )
    assert set(in_reads) == {"taskSize"}
    in_template = await declared_items(
        session,
        "declared-template.workflow.json",
        '{"id": "b", "title": "B", "prompt": "Size: {{|"}',
    )
    assert "How big" in in_template["context.taskSize"].documentation.value


async def test_declared_values_inside_an_in_list(session):
    """The values of the variable that the comparison's `var` names, in each item of its `in`
    list (JSON, and a YAML block list), and nothing of the kind in a list beside no `var`."""
    in_list = await declared_items(
        session,
        "declared-in.workflow.json",
        '{"id": "b", "title": "B", "prompt": "p", "runCondition": {"var": "taskSize", "in": ["small", "|"]}}',
    )
    assert {"small", "large"} <= set(in_list)
    assert in_list["large"].detail == "allowed value of taskSize"
    assert in_list["large"].text_edit.new_text == '"large"'
    in_yaml = await items_at(
        session,
        "declared-in.workflow.yaml",
        "id: sized-flow\nname: Sized\ncontext:\n  taskSize: {type: string, enum: [small, large]}\n"
        "steps:\n  - id: b\n    title: B\n    prompt: p\n    runCondition:\n      var: taskSize\n"
        "      in:\n        - sm|\n",
    )
    assert in_yaml["large"].detail == "allowed value of taskSize"
    beside_no_var = await declared_items(
        session,
        "declared-reads-values.workflow.json",
        '{"id": "b", "title": "B", "prompt": "p", "reads": ["|"]}',
    )
    assert "large" not in beside_no_var
