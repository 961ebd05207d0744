"""Hostile workflow content opened in the real language server (issue 25): checking and the
compiled view stay bounded, and the server keeps answering."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types

from tests.hostile_workflows import many_findings_workflow
from workrail_engine.limits import MAX_FINDINGS_PER_FILE

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]


async def test_thousands_of_findings_in_one_prompt_do_not_freeze_the_server(session):
    """6,000 findings in one string took over a minute to check, during which the server
    answered nothing; now the capped list arrives in seconds and hover still answers."""
    flow = many_findings_workflow(6000, "many")
    uri = session.open("workflows/many.json", json.dumps(flow))
    items = await asyncio.wait_for(session.diagnostics(uri, timeout=30), timeout=30)
    assert len(items) == MAX_FINDINGS_PER_FILE + 1
    assert str(items[-1].code) == "WR009"
    assert await asyncio.wait_for(session.hover(uri, types.Position(0, 3)), timeout=20)
