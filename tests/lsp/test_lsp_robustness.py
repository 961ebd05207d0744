"""Hostile input: the server stays up, keeps answering, and ends with the final text's diagnostics."""

from __future__ import annotations

import json
import random

import pytest
from lsp_harness import marked
from lsprotocol import types

from workrail_engine.lint import lint_text

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]


def codes(items):
    return [(str(d.code), d.range.start.line) for d in items]


def engine_codes(text, path):
    """What ``workrail validate`` reports for the same text."""
    from workrail_engine.text.document import LineIndex

    index = LineIndex(text)
    return [(d.code, index.position(d.span.start)[0]) for d in lint_text(text, path).diagnostics]


async def still_answers(session, uri, text):
    """A hover and a completion get an answer (possibly empty), then diagnostics match the engine."""
    await session.hover(uri, types.Position(0, 0))
    await session.completion(uri, types.Position(0, min(1, len(text))))
    items = await session.diagnostics(uri)
    assert codes(items) == engine_codes(text, str(session.root / uri.rsplit("/", 1)[1]))


async def test_random_bytes(session):
    rng = random.Random(4)
    text = bytes(rng.randrange(256) for _ in range(4000)).decode("latin-1")
    uri = session.open("random.workflow.json", text)
    await still_answers(session, uri, text)


async def test_empty_file(session):
    uri = session.open("empty.workflow.json", "")
    await still_answers(session, uri, "")
    assert (await session.completion(uri, types.Position(0, 0)))[0].label == "new workflow"


async def test_ten_megabyte_file(session):
    step = {"id": "s", "title": "A step", "prompt": "x" * 300}
    steps = [dict(step, id=f"step-{i}") for i in range(28_000)]
    text = json.dumps({"id": "huge", "name": "Huge", "steps": steps}, indent=2)
    assert len(text) > 10_000_000
    uri = session.open("huge.workflow.json", text)
    await still_answers(session, uri, text)


async def test_ten_thousand_levels_of_nesting(session):
    text = '{"id": "deep", "steps": ' + "[" * 10_000 + "]" * 10_000 + "}"
    uri = session.open("deep.workflow.json", text)
    await still_answers(session, uri, text)
    deep_cursor = text.index("[" * 10) + 5_000
    items = await session.completion(uri, types.Position(0, deep_cursor))
    assert isinstance(items, list)


async def test_lone_utf16_surrogates(session):
    # Escaped in the JSON text, and raw in the document (a client may send them in a string).
    text = '{"id": "surrogates", "name": "\\ud800 x", "steps": [{"id": "a\ud800b", "title": "\udc00", "prompt": "p"}]}'
    uri = session.open("surrogates.workflow.json", text)
    await still_answers(session, uri, text)
    clean, position = marked(
        '{"id": "surrogates", "name": "\ud800", "steps": [{"id": "abc", "ti|', session.encoding
    )
    session.change(uri, clean)
    await session.completion(uri, position)
    await still_answers(session, uri, clean)


async def test_a_burst_of_500_changes(session):
    base = '{\n  "id": "burst",\n  "name": "Burst",\n  "steps": [\n    {"id": "one", "title": "T", "prompt": ""}\n  ]\n}\n'
    uri = session.open("burst.workflow.json", base)
    line, column = 4, base.splitlines()[4].index('""') + 1
    typed = "Ünïcode 🚀 typing" * 30
    for count, char in enumerate(typed[:500]):
        where = types.Position(line, column + _units(typed[:count], session.encoding))
        version = session.change(uri, char, types.Range(where, where))
    final = base.replace('""', json.dumps(typed[:500], ensure_ascii=False))
    items = await session.diagnostics(uri, version)
    assert codes(items) == engine_codes(final, str(session.root / "burst.workflow.json"))
    await still_answers(session, uri, final)


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2
