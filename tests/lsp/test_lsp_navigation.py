"""Symbols, go to definition, find references and rename of step ids over the real protocol."""

from __future__ import annotations

import pytest
from lsp_harness import apply_edits
from lsprotocol import types
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio(loop_scope="module")

WORKFLOW = """{
  "id": "nav-flow",
  "name": "Navigation",
  "steps": [
    {"id": "plan", "title": "Plän 🚀", "prompt": "Write the plan"},
    {"id": "build", "title": "Build", "prompt": "Follow {{steps.plan.output}} and {{ steps.plan.output.summary }}"},
    {"id": "checks", "type": "parallel", "steps": [
      {"id": "lint", "run": {"command": ["ruff", "{{steps.plan.output}}"]}},
      {"id": "test", "run": {"command": ["pytest"]}}
    ]},
    {"id": "again", "type": "loop", "loop": {"type": "for", "count": 2}, "body": "plan"},
    {"id": "inline", "type": "loop", "loop": {"type": "for", "count": 2}, "body": [{"id": "inner", "title": "I", "prompt": "p"}]}
  ]
}
"""


def ident(uri):
    return types.TextDocumentIdentifier(uri=uri)


def cursor_before(session, marker):
    at = WORKFLOW.index(marker)
    return session.position(WORKFLOW[:at] + "|" + WORKFLOW[at:])[1]


def text_of(range_, encoding):
    from workrail_engine.text.document import LineIndex

    index = LineIndex(WORKFLOW)
    return WORKFLOW[
        index.offset(range_.start.line, range_.start.character, encoding) : index.offset(
            range_.end.line, range_.end.character, encoding
        )
    ]


async def test_document_symbols_nest_groups_and_loops(session):
    uri = session.open("symbols.workflow.json", WORKFLOW)
    result = await session.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=ident(uri))
    )
    (root,) = result
    assert root.name == "Navigation"
    names = [s.name for s in root.children]
    assert names == ["plan", "build", "checks", "again", "inline"]
    checks = root.children[2]
    assert [c.name for c in checks.children] == ["lint", "test"]
    assert [c.name for c in root.children[4].children] == ["inner"]
    assert [c.name for c in root.children[3].children] == ["plan"]  # a body given by step id
    assert text_of(root.children[0].selection_range, session.encoding) == '"plan"'


async def test_definition_from_a_template_reference(session):
    uri = session.open("definition.workflow.json", WORKFLOW)
    result = await session.client.text_document_definition_async(
        types.DefinitionParams(
            text_document=ident(uri), position=cursor_before(session, "lan.output}} and")
        )
    )
    (location,) = result
    assert text_of(location.range, session.encoding) == "plan"
    assert location.range.start.line == 4


async def test_definition_from_a_loop_body(session):
    uri = session.open("definition2.workflow.json", WORKFLOW)
    result = await session.client.text_document_definition_async(
        types.DefinitionParams(
            text_document=ident(uri),
            position=cursor_before(session, 'plan"},\n    {"id": "inline"'),
        )
    )
    assert [loc.range.start.line for loc in result] == [4]


async def test_references_of_a_step_id(session):
    uri = session.open("references.workflow.json", WORKFLOW)
    result = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=ident(uri),
            position=cursor_before(session, 'plan", "title"'),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert sorted(loc.range.start.line for loc in result) == [4, 5, 5, 7, 10]
    assert all(text_of(loc.range, session.encoding) == "plan" for loc in result)


async def test_rename_updates_every_reference(session):
    uri = session.open("rename.workflow.json", WORKFLOW)
    edit = await session.client.text_document_rename_async(
        types.RenameParams(
            text_document=ident(uri),
            position=cursor_before(session, 'plan", "title"'),
            new_name="design",
        )
    )
    renamed = apply_edits(WORKFLOW, edit.changes[uri], session.encoding)
    assert "plan" not in renamed.replace("Write the plan", "")
    assert renamed.count("steps.design.output") == 3 and '"body": "design"' in renamed


@pytest.mark.parametrize("bad", ["Not Valid", "ab", "build"])
async def test_rename_refuses_an_invalid_or_taken_id(session, bad):
    uri = session.open("rename-bad.workflow.json", WORKFLOW)
    with pytest.raises(JsonRpcException) as caught:
        await session.client.text_document_rename_async(
            types.RenameParams(
                text_document=ident(uri),
                position=cursor_before(session, 'plan", "title"'),
                new_name=bad,
            )
        )
    assert "step id" in str(caught.value) or "already exists" in str(caught.value)


PARAMETERS = """{
  "id": "param-flow",
  "name": "Parameters",
  "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
  "secrets": ["API_TOKEN"],
  "steps": [
    {"id": "call", "run": {"command": ["curl", "-H", "{{secrets.API_TOKEN}}", "{{parameters.target}}"]}}
  ]
}
"""


@pytest.mark.parametrize(
    ("marker", "line", "name"), [("arget}}", 3, "target"), ("PI_TOKEN}}", 4, "API_TOKEN")]
)
async def test_definition_of_parameters_and_secrets(session, marker, line, name):
    uri = session.open("params.workflow.json", PARAMETERS)
    at = PARAMETERS.index(marker)
    position = session.position(PARAMETERS[:at] + "|" + PARAMETERS[at:])[1]
    (location,) = await session.client.text_document_definition_async(
        types.DefinitionParams(text_document=ident(uri), position=position)
    )
    assert location.range.start.line == line
    from workrail_engine.text.document import LineIndex

    index = LineIndex(PARAMETERS)
    start = index.offset(
        location.range.start.line, location.range.start.character, session.encoding
    )
    assert PARAMETERS[start : start + len(name)] == name
