"""Hostile documents opened in the editor: refused with a code, quickly; the server keeps answering."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types

from workrail_engine.limits import MAX_NESTING

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]


def alias_bomb() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 8):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


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
