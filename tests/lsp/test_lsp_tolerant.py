"""Every editor feature × {valid JSON, JSON being typed (broken), YAML}, over the real protocol.

The broken document has a half-typed key (``"ag``) in the middle: it does not parse, and every
feature must still answer from the recovered tree. Cursor positions are marked with ``|``.
"""

from __future__ import annotations

import json

import pytest
import yaml
from lsp_harness import apply_edits
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

VALID = """{
  "id": "tol-flow",
  "name": "Tolerant",
  "steps": [
    {"id": "plan", "title": "Make a plan", "prompt": "Write the plan", "runCondition": {"var": "mode", "equals": "full"}},
    {"id": "build", "title": "Build", "prompt": "Follow {{steps.plan.output}} now",
     "onFailure": "abrt"},
    {"id": "again", "type": "loop", "loop": {"type": "for", "count": 2}, "body": "plan"}
  ]
}
"""
BROKEN = VALID.replace('"onFailure": "abrt"},', '"onFailure": "abrt",\n     "ag\n    },')
YAML = """id: tol-flow
name: Tolerant
# a comment that must survive edits
steps:
  - id: plan
    title: Make a plan
    prompt: Write the plan
    runCondition:
      var: mode
      equals: full
  - id: build
    title: Build
    prompt: Follow {{steps.plan.output}} now
    onFailure: abrt
  - id: again
    type: loop
    loop:
      type: for
      count: 2
    body: plan
"""
MISSING_COMMA = VALID.replace('now",\n', 'now"\n')
DOCUMENTS = {"valid": (VALID, "json"), "broken": (BROKEN, "json"), "yaml": (YAML, "yaml")}
KINDS = list(DOCUMENTS)
_opened = iter(range(1_000_000))


def open_at(session, kind: str, needle: str, shift: int = 0):
    """Open the document of ``kind`` and return (uri, text, position of ``needle`` + shift)."""
    text, fmt = DOCUMENTS[kind]
    at = text.index(needle) + shift
    clean, position = session.position(text[:at] + "|" + text[at:])
    suffix = ".workflow.yaml" if fmt == "yaml" else ".workflow.json"
    uri = session.open(f"t{next(_opened)}{suffix}", clean, fmt)
    return uri, clean, position


def ident(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def test_the_broken_documents_really_are_broken():
    with pytest.raises(json.JSONDecodeError):
        json.loads(MISSING_COMMA)
    with pytest.raises(json.JSONDecodeError):
        json.loads(BROKEN)
    assert yaml.safe_load(YAML)["steps"][2]["body"] == "plan"


@pytest.mark.parametrize("kind", KINDS)
async def test_outline(session, kind):
    uri, text, _ = open_at(session, kind, "build")
    (workflow,) = await session.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=ident(uri))
    )
    assert workflow.name == "Tolerant"
    assert [s.name for s in workflow.children] == ["plan", "build", "again"]
    build = workflow.children[1].selection_range
    assert build.start.line == text[: text.index("build")].count("\n")


@pytest.mark.parametrize("kind", KINDS)
async def test_hover_reads_a_condition_and_a_reference(session, kind):
    uri, _, position = open_at(session, kind, "runCondition")
    assert "Runs when:" in await session.hover(uri, position)
    uri, _, position = open_at(session, kind, "plan.output")
    assert "Make a plan" in await session.hover(uri, position)


@pytest.mark.parametrize("kind", KINDS)
async def test_completion_of_keys_inserts_the_document_s_own_syntax(session, kind):
    text, fmt = DOCUMENTS[kind]
    if kind == "broken":  # at the half-typed key itself
        uri, _, position = open_at(session, kind, '"ag\n', 3)
    elif kind == "valid":
        uri, _, position = open_at(session, kind, '"onFailure"', 1)
    else:
        uri, _, position = open_at(session, kind, "onFailure")
    items = {i.label: i for i in await session.completion(uri, position)}
    assert "agentRole" in items and "id" not in items  # the step's own keys are not offered
    new_text = items["agentRole"].text_edit.new_text
    if fmt == "yaml":
        assert new_text.startswith("agentRole:") and '"' not in new_text
    else:
        assert new_text.startswith('"agentRole": ')


@pytest.mark.parametrize("kind", KINDS)
async def test_completion_of_values(session, kind):
    uri, _, position = open_at(session, kind, "abrt", 2)
    items = {i.label: i for i in await session.completion(uri, position)}
    assert {"abort", "continue"} <= set(items)
    quoted = DOCUMENTS[kind][1] == "json"
    assert items["abort"].text_edit.new_text == ('"abort"' if quoted else "abort")


@pytest.mark.parametrize("kind", KINDS)
async def test_definition_and_references(session, kind):
    uri, text, position = open_at(session, kind, "plan.output", 1)
    (target,) = await session.client.text_document_definition_async(
        types.DefinitionParams(text_document=ident(uri), position=position)
    )
    assert target.range.start.line == text[: text.index("plan")].count("\n")
    found = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=ident(uri),
            position=position,
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert len(found) == 3  # the id, the template reference, the loop body


@pytest.mark.parametrize("kind", KINDS)
async def test_rename_edits_every_occurrence_in_place(session, kind):
    uri, text, position = open_at(session, kind, "plan.output", 1)
    edit = await session.client.text_document_rename_async(
        types.RenameParams(text_document=ident(uri), position=position, new_name="make-plan")
    )
    renamed = apply_edits(text, edit.changes[uri], session.encoding)
    assert renamed.count("make-plan") == 3 and renamed.count('"plan"') == 0
    if kind == "yaml":
        assert yaml.safe_load(renamed)["steps"][2]["body"] == "make-plan"
        assert "# a comment that must survive edits" in renamed
    elif kind == "valid":
        assert json.loads(renamed)["steps"][2]["body"] == "make-plan"


@pytest.mark.parametrize("kind", KINDS)
async def test_code_actions(session, kind):
    if kind == "broken":  # a syntax error with a certain repair
        text = MISSING_COMMA
        uri = session.open(f"t{next(_opened)}.workflow.json", text)
    else:
        uri, text, _ = open_at(session, kind, "abrt")
    diagnostics = await session.diagnostics(uri)
    whole = types.Range(types.Position(0, 0), types.Position(len(text.splitlines()) + 1, 0))
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=ident(uri),
            range=whole,
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    titles = {a.title: a for a in actions}
    if kind == "broken":
        assert [d.code for d in diagnostics] == ["WR001"]  # strict: the syntax error only
        fixed = apply_edits(text, titles["Insert the missing ','"].edit.changes[uri], "utf-16")
        assert json.loads(fixed)["steps"][1]["onFailure"] == "abrt"
        return
    stem = uri.rsplit("/", 1)[1].split(".")[0]
    fix = titles[f"Change the id to {stem!r}"]  # WR601: the id differs from the file name
    fixed = apply_edits(text, fix.edit.changes[uri], session.encoding)
    if kind == "yaml":
        assert yaml.safe_load(fixed)["id"] == stem
        assert "# a comment that must survive edits" in fixed
    else:
        assert json.loads(fixed)["id"] == stem


@pytest.mark.parametrize("kind", KINDS)
async def test_workspace_checks_keep_seeing_the_document(session, kind):
    """A workflow with the same id is flagged, whatever state this open one is in."""
    uri, _, _ = open_at(session, kind, "tol-flow")
    name = f"other-{kind}.workflow.json"
    (session.root / name).write_text(VALID, encoding="utf-8")
    other = session.open(name, VALID)
    diagnostics = await session.diagnostics(other)
    assert any(d.code == "WR603" for d in diagnostics), [d.code for d in diagnostics]
    session.close(other)
    session.close(uri)


async def test_outline_after_an_edit_shows_the_edit_and_keeps_the_rest(session):
    """Unchanged steps' symbols are reused between outlines: an edited one must not be stale."""
    uri, text, _ = open_at(session, "valid", "steps")
    request = types.DocumentSymbolParams(text_document=ident(uri))
    (before,) = await session.client.text_document_document_symbol_async(request)
    at = text.index('"Build"') + 1
    line, column = text[:at].count("\n"), at - (text.rfind("\n", 0, at) + 1)
    session.change(
        uri, "Re", types.Range(types.Position(line, column), types.Position(line, column))
    )
    session.change(uri, "\n", types.Range(types.Position(1, 0), types.Position(1, 0)))
    (after,) = await session.client.text_document_document_symbol_async(request)
    assert [s.detail for s in after.children] == [
        "prompt: Make a plan",
        "prompt: ReBuild",
        before.children[2].detail,
    ]
    assert after.children[1].detail == "prompt: ReBuild"
    moved = [s.range.start.line for s in after.children]
    assert moved == [s.range.start.line + 1 for s in before.children]  # a line was inserted above
