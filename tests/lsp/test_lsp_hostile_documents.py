"""Hostile documents opened in the editor: refused with a code, quickly; the server keeps answering."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types

from tests.hostile_workflows import alias_bomb
from workrail_engine.limits import MAX_NESTING

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]


async def test_an_alias_bomb_is_a_diagnostic_and_the_server_stays_responsive(session):
    uri = session.open("workflows/bomb.yaml", alias_bomb(), language="yaml")
    items = await asyncio.wait_for(session.diagnostics(uri), timeout=20)
    assert [str(d.code) for d in items] == ["WR008"]
    await asyncio.wait_for(session.hover(uri, types.Position(0, 0)), timeout=20)
    other = session.open("workflows/fine.json", json.dumps({"id": "fine"}))
    assert await asyncio.wait_for(session.diagnostics(other), timeout=20)


async def test_deep_nesting_is_a_diagnostic_in_the_editor(session):
    depth = MAX_NESTING + 200
    text = '{"id": "deep", "x": ' + "[" * depth + "]" * depth + "}"
    uri = session.open("workflows/deep.json", text)
    items = await asyncio.wait_for(session.diagnostics(uri), timeout=20)
    assert [str(d.code) for d in items] == ["WR005"]
    await asyncio.wait_for(session.completion(uri, types.Position(0, 1)), timeout=20)


# -- YAML that tree-sitter's grammar cannot take ------------------------------------------------


def indented_yaml(levels: int) -> str:
    """A mapping nested ``levels`` deep, one space more per level (46 KB at 300 levels):
    tree-sitter-yaml wrote past its buffer from 254 levels and the process died."""
    nested = "".join(" " * (i + 1) + "a:\n" for i in range(levels))
    return "id: deep-yaml\nsteps:\n" + nested + " " * (levels + 1) + "1\n"


def long_yaml(steps: int) -> str:
    lines = [f"  - id: step-{i}\n    title: Step {i}\n    prompt: Do {i}\n" for i in range(steps)]
    return "id: long-yaml\nname: Long\ndescription: Many steps\nsteps:\n" + "".join(lines)


async def test_yaml_254_indentation_levels_deep_never_reaches_tree_sitter(session):
    uri = session.open("workflows/indented.yaml", indented_yaml(300), language="yaml")
    items = await asyncio.wait_for(session.diagnostics(uri), timeout=20)
    assert [str(d.code) for d in items] == ["WR005"]
    # Every editor feature reads the tree: none of them may parse this text with tree-sitter.
    await asyncio.wait_for(session.hover(uri, types.Position(3, 3)), timeout=20)
    outline = await session.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert not outline
    folds = await session.client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert not folds
    other = session.open("workflows/after-indented.json", json.dumps({"id": "after"}))
    assert await asyncio.wait_for(session.diagnostics(other), timeout=20)


async def test_workspace_symbols_skip_a_deep_yaml_file_on_disk(session):
    """``workspace/symbol`` reads unopened files: the deep one must not crash the server there."""
    folder = session.root / "workflows"
    folder.mkdir(exist_ok=True)
    (folder / "on-disk-deep.yaml").write_text(indented_yaml(300))
    (folder / "on-disk-fine.yaml").write_text(long_yaml(2).replace("long-yaml", "on-disk-fine"))
    symbols = await asyncio.wait_for(
        session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="step-1")),
        timeout=30,
    )
    assert any(s.location.uri.endswith("on-disk-fine.yaml") for s in symbols or [])


async def test_yaml_of_more_than_32767_lines_has_an_outline_and_hover(session):
    steps = 11_000  # three lines each: 33,004 lines
    text = long_yaml(steps)
    assert text.count("\n") > 32_767
    uri = session.open("workflows/long-yaml.yaml", text, language="yaml")
    assert await asyncio.wait_for(session.diagnostics(uri), timeout=60) == []
    outline = await asyncio.wait_for(
        session.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
        ),
        timeout=60,
    )
    (workflow,) = outline
    *shown, rest = workflow.children  # the outline's own bound (MAX_OUTLINE_SYMBOLS) applies
    assert shown[-1].name == f"step-{len(shown) - 1}"
    assert rest.name == f"… {steps - len(shown):,} more steps"
    last_prompt_line = text.count("\n") - 1  # "    prompt: Do 10999"
    assert rest.range.end.line >= last_prompt_line  # the tree reaches past line 32,767
    hover = await asyncio.wait_for(
        session.hover(uri, types.Position(last_prompt_line, 6)), timeout=60
    )
    assert hover and "prompt" in hover.lower()


async def test_a_lone_surrogate_in_yaml_is_a_diagnostic(session):
    text = "id: lone-surrogate\nname: A \ud800 name\nsteps: []\n"
    uri = session.open("workflows/surrogate.yaml", text, language="yaml")
    items = await asyncio.wait_for(session.diagnostics(uri), timeout=20)
    assert [(str(d.code), d.range.start.line) for d in items] == [("WR001", 1)]
    assert "surrogate" in items[0].message
    await asyncio.wait_for(session.hover(uri, types.Position(0, 1)), timeout=20)
