"""Quick fixes (from the engine's fix data) and formatting, applied like a client applies them."""

from __future__ import annotations

import json

import pytest
from lsp_harness import apply_edits
from lsprotocol import types

from workrail_engine.lint import lint_text

pytestmark = pytest.mark.asyncio(loop_scope="module")

BROKEN = """{
  "id": "Fix_Me",
  "name": "Fixes 🚀",
  "name": "again",
  "steps": [
    {"id": "plan", "title": "Plän", "promt": "p"},
    {"id": "two", "title": "T"},
    {"id": "three", "run": {"command": ["x"], "timeoutSeconds": 5}, "onFailure": "abrt"}
  ]
}
"""


async def actions_on(session, uri, text, needle):
    from workrail_engine.text.document import LineIndex

    index = LineIndex(text)
    start = index.position(text.index(needle), session.encoding)
    end = index.position(text.index(needle) + len(needle), session.encoding)
    diagnostics = await session.diagnostics(uri)
    return await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(*start), types.Position(*end)),
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )


@pytest.mark.parametrize(
    ("needle", "title", "before", "after"),
    [
        pytest.param('"promt"', "Rename to 'prompt'", '"promt"', '"prompt"', id="misspelled-key"),
        pytest.param('"abrt"', "Change to 'abort'", '"abrt"', '"abort"', id="enum-value"),
        pytest.param('"Fix_Me"', "Change to 'fix-me'", '"Fix_Me"', '"fix-me"', id="kebab-case-id"),
        pytest.param(
            '{"id": "two"',
            "Add the missing property 'prompt'",
            '"title": "T"}',
            '"prompt": ""',
            id="missing-property",
        ),
        pytest.param(
            '"name": "again"',
            "Remove the repeated 'name'",
            '"name": "again"',
            None,
            id="duplicate-key",
        ),
    ],
)
async def test_quick_fix_from_the_engine_fix_data(session, needle, title, before, after):
    uri = session.open(f"fix-{abs(hash(needle))}.workflow.json", BROKEN)
    actions = await actions_on(session, uri, BROKEN, needle)
    chosen = next(a for a in actions if a.title == title)
    assert chosen.kind == types.CodeActionKind.QuickFix and chosen.diagnostics
    fixed = apply_edits(BROKEN, chosen.edit.changes[uri], session.encoding)
    if after is None:
        assert fixed.count(before) == 0 and '"name": "Fixes 🚀"' in fixed
    else:
        assert after in fixed
    code = chosen.diagnostics[0].code
    before_count = sum(d.code == code for d in lint_text(BROKEN, "x.workflow.json").diagnostics)
    after_count = sum(d.code == code for d in lint_text(fixed, "x.workflow.json").diagnostics)
    assert after_count < before_count


async def test_formatting_uses_two_spaces_and_keeps_key_order(session):
    text = '{"steps":[{"title":"T","id":"one-step","prompt":"p 🚀","retry":{"maxAttempts":2.0}}],"name":"N","id":"fmt-flow","tags":[]}'
    uri = session.open("fmt-flow.workflow.json", text)
    edits = await session.client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            options=types.FormattingOptions(tab_size=4, insert_spaces=True),
        )
    )
    formatted = apply_edits(text, edits, session.encoding)
    assert json.loads(formatted) == json.loads(text)
    assert list(json.loads(formatted)) == ["steps", "name", "id", "tags"]
    assert '\n  "steps": [\n    {\n      "title": "T",' in formatted
    assert '"maxAttempts": 2.0' in formatted and '"tags": []' in formatted


async def test_formatting_leaves_a_broken_document_alone(session):
    uri = session.open("fmt-broken.workflow.json", '{"id": "x",')
    edits = await session.client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert not edits
