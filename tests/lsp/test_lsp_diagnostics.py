"""Diagnostics over the real protocol: the engine's lint, in the client's position encoding."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types

from workrail_engine.lint import lint_text
from workrail_engine.text.document import LineIndex

pytestmark = pytest.mark.asyncio(loop_scope="module")

# Non-ASCII before the errors on the same lines: UTF-8 and UTF-16 columns differ from code points.
BROKEN = """{
  "id": "Ünïcode_Flow",
  "name": "Ärger 🚀",
  "steps": [
    {"id": "plan", "title": "Plän 🚀", "promt": "Plan the 🚀 work"},
    {"id": "do", "title": "Dö", "prompt": "Use {{steps.nope.output}} 🚀", "onFailure": "abrt"},
    {"id": "loop-it", "type": "loop", "loop": {"type": "while"}, "body": "plan"}
  ]
}
"""


def expected(
    text: str, path: str, encoding: str
) -> list[tuple[str, str, tuple[int, int, int, int]]]:
    index = LineIndex(text)
    out = []
    for d in lint_text(text, path).diagnostics:
        (sl, sc), (el, ec) = (
            index.position(d.span.start, encoding),
            index.position(d.span.end, encoding),
        )
        out.append((d.code, d.message, (sl, sc, el, ec)))
    return out


def shown(items: list[types.Diagnostic]) -> list[tuple[str, str, tuple[int, int, int, int]]]:
    return [
        (
            str(d.code),
            d.message,
            (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character),
        )
        for d in items
    ]


async def test_diagnostics_equal_the_engine_lint_in_the_negotiated_encoding(session):
    uri = session.open("broken.workflow.json", BROKEN)
    items = await session.diagnostics(uri)
    want = expected(BROKEN, str(session.root / "broken.workflow.json"), session.encoding)
    assert len(want) >= 3
    assert shown(items) == want
    # The encodings really differ on these lines, so a wrong unit would have failed above.
    index = LineIndex(BROKEN)
    line = BROKEN.index('"promt"')
    assert index.position(line, "utf-8") != index.position(line, "utf-16")
    assert all(d.source == "workrail" for d in items)
    session.close(uri)  # open documents count in workspace-level checks (same workflow id)


async def test_incremental_edit_updates_the_diagnostics(session):
    text = BROKEN.replace("promt", "prompt")
    uri = session.open("incremental.workflow.json", BROKEN)
    await session.diagnostics(uri)
    start = BROKEN.index("promt")
    index = LineIndex(BROKEN)
    sl, sc = index.position(start, session.encoding)
    el, ec = index.position(start + len("promt"), session.encoding)
    version = session.change(
        uri, "prompt", types.Range(types.Position(sl, sc), types.Position(el, ec))
    )
    items = await session.diagnostics(uri, version)
    assert shown(items) == expected(
        text, str(session.root / "incremental.workflow.json"), session.encoding
    )
    assert "WR" in str(items[0].code)
    session.close(uri)


async def test_a_valid_workflow_has_no_diagnostics_and_other_json_is_ignored(session):
    good = json.dumps(
        {
            "id": "fine-flow",
            "name": "Fine",
            "version": "1.0.0",
            "steps": [{"id": "one", "title": "One", "prompt": "Do it"}],
        },
        indent=2,
    )
    uri = session.open("fine-flow.workflow.json", good)
    assert await session.diagnostics(uri) == []
    other = session.open("package.json", '{"name": 1, "broken": }')
    assert await session.diagnostics(other) == []


async def test_pull_reports_unchanged_with_the_same_result_id(session):
    # Neovim pulls on its own; a push client (VS Code here) may pull too and gets the same answers.
    uri = session.open("again.workflow.json", BROKEN)
    ident = types.TextDocumentIdentifier(uri=uri)
    first = await session.client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident)
    )
    assert first.kind == "full" and first.result_id
    # The workspace scan the first pull started may end between two pulls (the module's server
    # and workspace are shared, so it may find other tests' files): its new ids change the
    # result, rightly. Nothing changes once it has settled, and then the answer is "unchanged".
    for _ in range(20):
        second = await session.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident, previous_result_id=first.result_id)
        )
        if second.kind == "unchanged":
            break
        first = second
        await asyncio.sleep(0.25)
    assert second.kind == "unchanged" and second.result_id == first.result_id
    session.change(uri, BROKEN.replace("abrt", "abort"))
    third = await session.client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident, previous_result_id=first.result_id)
    )
    assert third.kind == "full" and third.result_id != first.result_id


async def test_push_without_pull_support_and_cleared_on_close(session):
    uri = session.open("closing.workflow.json", BROKEN)
    if session.pull:
        assert await session.diagnostics(uri)
        session.close(uri)
        await asyncio.sleep(0.3)
        assert [
            p for p in session.published if p.uri == uri
        ] == []  # a pull client is never pushed to
        return
    assert await session.diagnostics(uri)
    session.close(uri)
    assert await session.diagnostics(uri) == []


async def test_duplicate_workflow_ids_across_the_workspace(session):
    on_disk = session.root / "workflows" / "first.json"
    on_disk.parent.mkdir(exist_ok=True)
    on_disk.write_text(
        json.dumps(
            {"id": "shared-id", "name": "A", "steps": [{"id": "one", "title": "t", "prompt": "p"}]},
            indent=2,
        )
    )
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=on_disk.as_uri(), type=types.FileChangeType.Created)]
        )
    )
    text = json.dumps(
        {
            "id": "shared-id",
            "name": "B",
            "version": "1.0.0",
            "steps": [{"id": "one", "title": "t", "prompt": "p"}],
        },
        indent=2,
    )
    uri = session.open("second.workflow.json", text)
    found = await session.diagnostics_until(uri, lambda ds: any(d.code == "WR603" for d in ds))
    items = [d for d in found if d.code == "WR603"]
    assert len(items) == 1
    related = items[0].related_information
    assert related and related[0].location.uri == on_disk.as_uri()
    assert related[0].location.range.start.line == 1  # the "id" line of first.json


async def test_validate_workspace_command(session):
    folder = session.root / "workflows"
    folder.mkdir(exist_ok=True)
    (folder / "cmd-check.json").write_text(BROKEN, encoding="utf-8")
    (session.root / "unrelated.json").write_text('{"not": "a workflow"}', encoding="utf-8")
    result = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="workrail.server.validateWorkspace", arguments=[])
    )
    by_path = {r["path"]: r["diagnostics"] for r in result["files"]}
    assert str(folder / "cmd-check.json") in by_path
    assert str(session.root / "unrelated.json") not in by_path
    codes = [d["code"] for d in by_path[str(folder / "cmd-check.json")]]
    assert codes == [d.code for d in lint_text(BROKEN, str(folder / "cmd-check.json")).diagnostics]
    assert result["summary"]["errors"] >= len([c for c in codes if c.startswith("WR1")])
    # One report shape: what `workrail validate --format json` prints for the same file.
    from workrail_engine.cli.formatters.json_format import JsonFormatter
    from workrail_engine.lint.report import Summary, lint_files

    path = str(folder / "cmd-check.json")
    reports = lint_files([path])
    printed = json.loads(JsonFormatter(color=False).render(reports, Summary.of(reports)))
    assert set(result) == set(printed) and set(result["summary"]) == set(printed["summary"])
    assert by_path[path] == printed["files"][0]["diagnostics"]


async def test_is_workflow_command_answers_with_the_servers_own_rule(session):
    async def ask(path: str, text: str) -> bool:
        return await session.client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="workrail.server.isWorkflow",
                arguments=[(session.root / path).as_uri(), text],
            )
        )

    assert await ask("workflows/a.json", "{}") is True
    assert await ask("x.workflow.yaml", "id: x") is True
    assert await ask("package.json", '{"name": "x"}') is False
    # A GitHub Actions file is not ours, even under a folder called workflows.
    assert await ask(".github/workflows/ci.yml", "on: push") is False
    # Any JSON whose $schema names the WorkRail schema is a workflow, wherever it lives.
    schema = '{"$schema": "https://workrail.dev/schema/workflow.schema.json", "id": "x"}'
    assert await ask("anywhere/flow.json", schema) is True
    # Malformed arguments are answered, not dropped.
    assert (
        await session.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="workrail.server.isWorkflow", arguments=[42])
        )
        is False
    )
