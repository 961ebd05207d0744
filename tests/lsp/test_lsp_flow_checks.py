"""The seeded flow bugs (tests/engine/lint/flow_bugs.py) in the editor: the real language server
reports each by its code at its range, in the client's position encoding, and offers ShellCheck's
fix as a quick fix."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.engine.lint.flow_bugs import SEEDED_BUGS
from tests.lsp.test_lsp_edits import actions_on
from workrail_engine.text.document import LineIndex

pytestmark = pytest.mark.asyncio(loop_scope="module")

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


@pytest.mark.parametrize("bug", SEEDED_BUGS, ids=[b.name for b in SEEDED_BUGS])
async def test_the_editor_finds_each_seeded_bug_at_its_range(session, bug):
    language = "yaml" if bug.name.endswith(".yaml") else "json"
    uri = session.open(f"workflows/{bug.name}", bug.text, language)
    found = await session.diagnostics(uri)
    index = LineIndex(bug.text)
    start = bug.text.index(bug.on_text)
    expected = types.Range(
        types.Position(*index.position(start, session.encoding)),
        types.Position(*index.position(start + len(bug.on_text), session.encoding)),
    )
    assert any(
        d.code == bug.code and d.range == expected and d.severity == _SEVERITY[bug.severity]
        for d in found
    ), [(d.code, d.range) for d in found]


async def test_shellchecks_fix_is_a_quick_fix(session):
    bug = next(b for b in SEEDED_BUGS if b.name == "shellcheck.json")
    uri = session.open("workflows/shellcheck-fix.json", bug.text)
    actions = await actions_on(session, uri, bug.text, "$n")
    (action,) = [a for a in actions or [] if "SC2086" in a.title]
    (edits,) = action.edit.changes.values()
    assert sorted(e.new_text for e in edits) == ['\\"', '\\"']
