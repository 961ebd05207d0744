"""The lint cases ported from upstream's test suite, in the editor: the language server reports
the same error codes as ``workrail validate`` and ``workflow_lint`` (tests/upstream), over the
real protocol with VS Code's and Neovim's capabilities.

Left out: the cases that need the catalog (WR709, a delegation to an unknown workflow: the
language server reports it once its workspace scan has ended, not in a document's first
diagnostics; test_lsp_project_config.py checks it against the CLI) or other files checked together
(a delegation cycle through another workflow).
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.upstream.cases import lint_file_name, lint_text, of_kind

pytestmark = pytest.mark.asyncio(loop_scope="module")

ONE_DOCUMENT = [
    c
    for c in of_kind("lint")
    if "WR709" not in c["errors"] and not c.get("files_together") and not c.get("others")
]


@pytest.mark.parametrize("c", ONE_DOCUMENT, ids=[c["id"] for c in ONE_DOCUMENT])
async def test_the_editor_reports_what_the_cli_reports(session, c):
    uri = session.open(f"workflows/{c['id']}/{lint_file_name(c)}", lint_text(c))
    found = await session.diagnostics(uri)
    errors = sorted({str(d.code) for d in found if d.severity == types.DiagnosticSeverity.Error})
    assert errors == c["errors"], f"{c['upstream']} » {c['test']}: {[d.message for d in found]}"
    warnings = {str(d.code) for d in found if d.severity == types.DiagnosticSeverity.Warning}
    assert set(c.get("warnings", [])) <= warnings, warnings
