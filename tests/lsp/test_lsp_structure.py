"""Folding, selection ranges, document links, highlights, workspace symbols, inlay hints and
range formatting, over the real protocol, on valid JSON, JSON being typed and YAML."""

from __future__ import annotations

import json

import pytest
from lsp_harness import apply_edits
from lsprotocol import types
from test_lsp_tolerant import DOCUMENTS, KINDS, ident, open_at

pytestmark = pytest.mark.asyncio(loop_scope="module")


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n")


@pytest.mark.parametrize("kind", KINDS)
async def test_folding_ranges_cover_the_steps(session, kind):
    uri, text, _ = open_at(session, kind, "steps")
    ranges = await session.client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=ident(uri))
    )
    starts = {r.start_line for r in ranges}
    assert line_of(text, "steps") in starts  # the steps array folds
    if kind == "yaml":
        assert line_of(text, "runCondition") in starts


@pytest.mark.parametrize("kind", KINDS)
async def test_selection_ranges_expand_outward(session, kind):
    uri, text, position = open_at(session, kind, "plan.output", 1)
    (selection,) = await session.client.text_document_selection_range_async(
        types.SelectionRangeParams(text_document=ident(uri), positions=[position])
    )
    lengths = []
    while selection is not None:
        r = selection.range
        lengths.append((r.start.line, r.start.character, -r.end.line, -r.end.character))
        selection = selection.parent
    assert len(lengths) >= 4  # the string, its member, the step, the steps, the workflow
    assert lengths == sorted(lengths, reverse=True)  # every parent holds its child


@pytest.mark.parametrize("kind", KINDS)
async def test_document_link_from_a_loop_body_to_its_step(session, kind):
    uri, text, _ = open_at(session, kind, "steps")
    links = await session.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=ident(uri))
    )
    (body,) = [link for link in links if link.target.startswith(uri)]
    assert body.range.start.line == line_of(text, '"body"' if kind != "yaml" else "body:")
    plan = line_of(text, "plan")
    assert body.target.endswith(f"#L{plan + 1},{text.splitlines()[plan].index('plan') + 1}")


async def test_document_link_for_the_schema(session):
    text = '{\n  "$schema": "../workflow.schema.json",\n  "id": "linked",\n  "steps": []\n}\n'
    uri = session.open("sub/linked.workflow.json", text)
    links = await session.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=ident(uri))
    )
    assert [link.target for link in links] == [(session.root / "workflow.schema.json").as_uri()]


@pytest.mark.parametrize("kind", KINDS)
async def test_highlights_of_a_step_id(session, kind):
    uri, text, position = open_at(session, kind, "plan.output", 1)
    found = await session.client.text_document_document_highlight_async(
        types.DocumentHighlightParams(text_document=ident(uri), position=position)
    )
    kinds = sorted(h.kind for h in found)
    assert kinds == [types.DocumentHighlightKind.Read] * 2 + [types.DocumentHighlightKind.Write]


async def test_workspace_symbols_list_workflows_and_steps(session):
    folder = session.root / "workflows"
    folder.mkdir(exist_ok=True)
    (folder / "on-disk.json").write_text(
        json.dumps(
            {
                "id": "on-disk",
                "name": "On disk",
                "steps": [{"id": "disk-step", "title": "D", "prompt": "p"}],
            }
        ),
        encoding="utf-8",
    )
    symbols = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="disk"))
    names = {s.name for s in symbols}
    assert {"On disk", "disk-step"} <= names


@pytest.mark.parametrize("kind", KINDS)
async def test_inlay_hints(session, kind):
    uri, text, _ = open_at(session, kind, "steps")
    everything = types.Range(types.Position(0, 0), types.Position(len(text.splitlines()) + 1, 0))
    hints = await session.client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=ident(uri), range=everything)
    )
    labels = [h.label for h in hints]
    hover_uri, _, position = open_at(session, kind, "runCondition")
    hover = await session.hover(hover_uri, position)
    condition = next(label for label in labels if label.startswith("Runs when:"))
    assert condition in hover  # the same reading as hover's
    assert "2 times" in labels  # the loop's bound
    assert "← Make a plan" in labels  # the producer of {{steps.plan.output}}


async def test_range_formatting_formats_the_enclosing_object_even_in_a_broken_document(session):
    text = DOCUMENTS["broken"][0].replace(
        '"loop": {"type": "for", "count": 2}', '"loop": {"type":"for","count":2}'
    )
    uri = session.open("rangefmt.workflow.json", text)
    start = text.index('"type":"for"')
    line = text[:start].count("\n")
    column = start - (text.rfind("\n", 0, start) + 1)
    edits = await session.client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=ident(uri),
            range=types.Range(types.Position(line, column), types.Position(line, column + 3)),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    formatted = apply_edits(text, edits, session.encoding)
    assert '"type": "for",' in formatted and '"count": 2' in formatted
    assert '"ag\n' in formatted  # the rest of the (broken) document is untouched
    session.close(uri)


async def test_range_formatting_leaves_a_formatted_yaml_document_alone(session):
    """YAML ranges are formatted as `workrail format` would (test_lsp_project_config.py); this
    document already is: no edits."""
    uri, text, _ = open_at(session, "yaml", "steps")
    edits = await session.client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=ident(uri),
            range=types.Range(types.Position(0, 0), types.Position(3, 0)),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert not edits


@pytest.mark.parametrize("kind", KINDS)
async def test_code_lens_preview_steps_and_validate_workspace(session, kind):
    uri, text, _ = open_at(session, kind, "steps")
    lenses = await session.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=ident(uri))
    )
    by_title = {lens.command.title: lens.command for lens in lenses}
    assert set(by_title) == {"Preview steps", "Validate workspace"}
    preview = by_title["Preview steps"]
    result = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=preview.command, arguments=preview.arguments)
    )
    # runCondition on "plan" needs mode == full: with an empty context it is skipped.
    assert result["steps"][:1] == ["build"], result
    assert "build" in result["message"]


@pytest.mark.parametrize("kind", KINDS)
async def test_semantic_tokens_for_template_references(session, kind):
    uri, text, _ = open_at(session, kind, "steps")
    tokens = await session.client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=ident(uri))
    )
    data = list(tokens.data)
    assert len(data) == 10  # {{steps.plan.output}}: the namespace and the name
    line = line_of(text, "{{steps")
    column = text.splitlines()[line].index("steps.plan")
    assert data[:5] == [line, column, len("steps"), 0, 0]
    assert data[5:] == [0, len("steps."), len("plan.output"), 1, 0]


async def test_document_links_for_function_references_and_routines(session):
    routines = session.root / "workflows" / "routines"
    routines.mkdir(parents=True, exist_ok=True)
    routine = routines / "review.json"
    routine.write_text(
        json.dumps({"id": "wr.routine-review", "name": "Review", "steps": []}), encoding="utf-8"
    )
    session.client.workspace_did_change_watched_files(  # as the editor's file watcher does
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=routine.as_uri(), type=types.FileChangeType.Created)]
        )
    )
    text = json.dumps(
        {
            "id": "calls",
            "functionDefinitions": [{"name": "check", "definition": "Check the work"}],
            "steps": [
                {"id": "one", "title": "One", "prompt": "p", "functionReferences": ["check()"]},
                {"id": "two", "templateCall": {"templateId": "wr.templates.routine.review"}},
            ],
        },
        indent=2,
    )
    uri = session.open("calls.workflow.json", text)
    links = await session.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=ident(uri))
    )
    targets = {link.target for link in links}
    assert routine.resolve().as_uri() in targets
    name_line = line_of(text, '"check"')
    name_column = text.splitlines()[name_line].index("check") + 1
    assert f"{uri}#L{name_line + 1},{name_column}" in targets
    session.close(uri)


async def test_semantic_tokens_for_a_bare_context_reference(session):
    text = '{"id": "bare", "steps": [{"id": "one", "title": "T", "prompt": "Use {{currentItem}} and {{context.mode}}"}]}'
    uri = session.open("bare.workflow.json", text)
    tokens = await session.client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=ident(uri))
    )
    first = text.index("currentItem")
    second = text.index("context.mode")
    assert list(tokens.data) == [
        0, first, len("currentItem"), 1, 0,
        0, second - first, len("context"), 0, 0,
        0, len("context."), len("mode"), 1, 0,
    ]  # fmt: skip
    session.close(uri)
