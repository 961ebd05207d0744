"""Hostile workflow content opened in the real language server (docs/security.md): checking and the
compiled view stay bounded, and the server keeps answering."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types

from tests.hostile_workflows import AMPLIFIED_CALLER, AMPLIFIER_ROUTINE, many_findings_workflow
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


async def test_hover_on_a_template_call_that_compiles_to_a_gigabyte_stays_small(session):
    """The hover shows a `templateCall` compiled: for this one it returned 1 GB. Now it says
    why the step is not served (WR811), in a few hundred characters."""
    routine = json.dumps(AMPLIFIER_ROUTINE)
    on_disk = session.root / "workflows" / "routine-amplify.json"
    on_disk.parent.mkdir(exist_ok=True)
    on_disk.write_text(routine)
    session.open("workflows/routine-amplify.json", routine)
    caller = json.dumps(AMPLIFIED_CALLER)
    at = caller.index('templateCall"')
    clean, position = session.position(caller[:at] + "|" + caller[at:])
    text = await asyncio.wait_for(
        session.hover(session.open("workflows/amplified.json", clean), position), timeout=30
    )
    assert "**Not served:** WR811" in text, text[:500]
    assert len(text) < 5000
