"""The language server and `workrail` agree: the project's configuration decides the same
diagnostics, "Format Document" gives what `workrail format` writes, and "Fix all" what
`workrail validate --fix` writes (the real server process; the real console script)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixable_texts import YAML_TEXT as FIXABLE_YAML
from fixable_texts import YAML_UNINDENTED
from lsp_harness import apply_edits
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

WORKRAIL = Path(sys.executable).with_name("workrail")
# Plus WR601 under another file name (the id differs from it).
YAML_TEXT = FIXABLE_YAML.replace("id: yaml-flow", "id: not-the-file-name")


def project(session, name: str, config: str) -> Path:
    root = session.root / name
    (root / ".git").mkdir(parents=True)
    (root / "workflows").mkdir()
    (root / "pyproject.toml").write_text(config)
    return root


async def workrail(*args: str, stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKRAIL_HOME": str(cwd / ".home"), "NO_COLOR": "1"}
    return await asyncio.to_thread(
        subprocess.run,
        [str(WORKRAIL), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )


def opened(session, path: Path, text: str) -> str:
    return session.open(str(path.relative_to(session.root)), text, language="yaml")


def with_id(workflow_id: str) -> str:
    """YAML_TEXT under an id of its own (two open documents with one id would be WR603)."""
    return YAML_TEXT.replace("id: not-the-file-name", f"id: {workflow_id}")


async def test_configured_ignores_apply_to_the_editor_as_to_the_cli(session):
    root = project(session, f"cfg-{session.encoding}", '[tool.workrail]\nignore = ["WR6"]\n')
    path = root / "workflows" / "flow.yaml"
    text = with_id(f"cfg-{session.encoding}")
    uri = opened(session, path, text)
    shown = sorted(str(d.code) for d in await session.diagnostics(uri))
    cli = await workrail(
        "validate", "--statistics", "-", "--stdin-filename", str(path), stdin=text, cwd=root
    )
    assert shown == ["WR101"]
    assert [line.split("\t")[1] for line in cli.stdout.splitlines()] == shown


async def test_configured_workflow_dirs_make_workflows(session):
    root = project(
        session, f"dirs-{session.encoding}", '[tool.workrail]\nworkflow-dirs = ["ops"]\n'
    )
    (root / "ops").mkdir()
    inside = opened(session, root / "ops" / "inside.yaml", with_id("inside"))
    outside = opened(session, root / "elsewhere.yaml", with_id("elsewhere"))
    assert [str(d.code) for d in await session.diagnostics(inside)] == ["WR101"]
    assert await session.diagnostics(outside) == []


async def test_format_document_is_what_workrail_format_writes(session):
    root = project(session, f"fmt-{session.encoding}", "[tool.workrail]\n")
    path = root / "workflows" / "not-the-file-name.yaml"
    text = YAML_UNINDENTED.replace("id: yaml-flow", "id: not-the-file-name")
    uri = opened(session, path, text)
    edits = await session.client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    formatted = apply_edits(text, edits, session.encoding)
    cli = await workrail("format", "-", "--stdin-filename", str(path), stdin=text, cwd=root)
    assert cli.returncode == 0, cli.stderr
    assert formatted == cli.stdout == YAML_TEXT
    assert "  - id: one\n" in formatted and "# YAML reads this as false" in formatted


async def test_fix_all_is_what_workrail_validate_fix_writes(session):
    root = project(session, f"fixall-{session.encoding}", "[tool.workrail]\n")
    path = root / "workflows" / "flow.yaml"
    uri = opened(session, path, YAML_TEXT)
    await session.diagnostics(uri)
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(
                diagnostics=[], only=[types.CodeActionKind.SourceFixAll]
            ),
        )
    )
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.workrail" and fix_all.title == "Fix all safe problems (1)"
    fixed = apply_edits(YAML_TEXT, fix_all.edit.changes[uri], session.encoding)
    cli = await workrail(
        "validate", "--fix", "-", "--stdin-filename", str(path), stdin=YAML_TEXT, cwd=root
    )
    assert fixed == cli.stdout == YAML_TEXT.replace("name: no ", 'name: "no" ')
    # Not among the quick fixes offered on a range (only when asked for by kind).
    quick = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(2, 6), types.Position(2, 8)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert [a.kind for a in quick] == [types.CodeActionKind.QuickFix] * len(quick) and quick


async def test_a_large_yaml_document_is_not_formatted_in_the_editor(session):
    steps = "".join(f"- id: step-{i}\n  title: Step {i}\n  prompt: Do {i}.\n" for i in range(3500))
    text = f"id: large-{session.encoding}\nname: Large\nversion: 1.0.0\nsteps:\n{steps}"
    assert len(text) > 128 * 1024  # workrail_lsp.formatting.MAX_YAML_FORMAT_CHARS
    uri = opened(session, session.root / "workflows" / f"large-{session.encoding}.yaml", text)
    edits = await session.client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert not edits
    small = opened(
        session,
        session.root / "workflows" / f"small-{session.encoding}.yaml",
        text[:4000].rsplit("- id", 1)[0],
    )
    assert await session.client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=small),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )  # the same layout, under the bound: formatted
