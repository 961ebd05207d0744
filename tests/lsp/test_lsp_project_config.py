"""The language server and `workrail` agree: the project's configuration decides the same
diagnostics, "Format Document" gives what `workrail format` writes, and "Fix all" what
`workrail validate --fix` writes (the real server process; the real console script)."""

from __future__ import annotations

import asyncio
import json
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
STEPS = [{"id": "one", "title": "One", "prompt": "Do it."}]


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
        "validate", "--statistics", "-q", "-", "--stdin-filename", str(path), stdin=text, cwd=root
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


def severities(items) -> dict[str, types.DiagnosticSeverity | None]:
    return {str(d.code): d.severity for d in items}


async def config_changed(session, uri: str, *changed: Path) -> None:
    """What an editor does when files change on disk: VS Code tells the server (it watches the
    workflow files and the configuration files the server registered); Neovim 0.11 on Linux
    watches nothing and pulls again at its next edit."""
    if not session.pull:
        session._mark(uri)  # the publish wanted is the one after this
        session.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                [
                    types.FileEvent(uri=p.as_uri(), type=types.FileChangeType.Changed)
                    for p in changed
                ]
            )
        )


async def test_strict_shows_warnings_as_errors_and_a_config_edit_is_read_again(session):
    root = project(session, f"strict-{session.encoding}", "[tool.workrail]\nstrict = true\n")
    path = root / "workflows" / "flow.yaml"
    text = with_id(f"strict-{session.encoding}")
    uri = opened(session, path, text)
    error, warning = types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning
    # WR601 is a warning; under strict it fails `workrail validate`, so the editor says error.
    assert severities(await session.diagnostics(uri)) == {"WR101": error, "WR601": error}
    cli = await workrail("validate", "-", "--stdin-filename", str(path), stdin=text, cwd=root)
    assert cli.returncode == 1 and "WR601" in cli.stdout
    # The file changes (another size: the cache is keyed on mtime and size): read again.
    (root / "pyproject.toml").write_text('[tool.workrail]\nstrict = false\nignore = ["WR1"]\n')
    await config_changed(session, uri, root / "pyproject.toml")
    shown = await session.diagnostics_until(uri, lambda items: "WR101" not in severities(items))
    assert severities(shown) == {"WR601": warning}


async def test_workflow_dirs_outside_the_workspace_are_scanned_as_the_cli_does(session):
    """The workspace folder's configuration names a folder outside the workspace; its workflow
    shares an id with one inside: WR603 in the editor as in `workrail validate`."""
    name = f"outside-{session.encoding}"
    outside = session.root.parent / name
    outside.mkdir()
    (outside / "other.json").write_text(
        json.dumps({"id": name, "name": "O", "version": "1.0.0", "steps": STEPS}, indent=2)
    )
    (session.root / ".workrail").mkdir()
    config = session.root / ".workrail" / "config.toml"
    config.write_text(f'workflow-dirs = ["../{name}"]\n')
    text = json.dumps({"id": name, "name": "I", "version": "1.0.0", "steps": STEPS}, indent=2)
    path = session.root / "workflows" / f"{name}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    uri = session.open(f"workflows/{name}.json", text)
    await config_changed(session, uri, config)
    shown = await session.diagnostics_until(uri, lambda items: bool(items))
    assert [str(d.code) for d in shown] == ["WR603"], [d.message for d in shown]
    assert str(outside / "other.json") in shown[0].related_information[0].location.uri.replace(
        "file://", ""
    )
    cli = await workrail("validate", "--format", "json", stdin="", cwd=session.root)
    by_path = {
        f["path"]: [d["code"] for d in f["diagnostics"]] for f in json.loads(cli.stdout)["files"]
    }
    assert by_path[f"workflows/{name}.json"] == ["WR603"]
    assert by_path[str(outside / "other.json")] == ["WR601", "WR603"]  # its id is not its name


async def test_the_server_asks_a_client_that_can_to_watch_configuration_files(session):
    watched = [  # the client sees the options as JSON: it does not know the method's types
        w["globPattern"]
        for r in session.registrations
        if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        for w in r.register_options["watchers"]
    ]
    if session.name == "vscode":  # dynamicRegistration: true in its capabilities
        assert watched == ["**/*.toml"]  # pyproject.toml, .workrail/config.toml, what extend names
    else:  # Neovim 0.11 on Linux: false, so nothing is asked of it
        assert watched == []


TWO_LISTS = """\
# Owned by the release team.
id: ranges
name: Ranges   # kept
version: "1.0.0"
tags:
- a
- b
steps:
- id: one
  title: One
  prompt: Do it.
"""


async def range_format(session, uri: str, start: int, end: int) -> list[types.TextEdit]:
    return await session.client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(start, 0), types.Position(end, 0)),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )


async def test_yaml_range_formatting_is_workrail_format_on_the_range(session):
    root = project(session, f"range-{session.encoding}", "[tool.workrail]\n")
    path = root / "workflows" / "ranges.yaml"
    uri = opened(session, path, TWO_LISTS)
    cli = await workrail("format", "-", "--stdin-filename", str(path), stdin=TWO_LISTS, cwd=root)
    assert cli.returncode == 0, cli.stderr
    whole = cli.stdout
    assert "  - a\n" in whole and "  - id: one\n    title: One\n" in whole
    # Lines 8-10 (the steps' items): only they change, as `workrail format` changes them.
    steps_only = apply_edits(TWO_LISTS, await range_format(session, uri, 8, 11), session.encoding)
    assert steps_only == TWO_LISTS.replace(
        "- id: one\n  title: One\n  prompt: Do it.\n",
        "  - id: one\n    title: One\n    prompt: Do it.\n",
    )
    assert "\n- a\n- b\n" in steps_only  # the tags, outside the range, as they were
    # The whole document as a range: what `workrail format` writes.
    every = apply_edits(TWO_LISTS, await range_format(session, uri, 0, 11), session.encoding)
    assert every == whole
    # A range with nothing to change: no edits.
    assert list(await range_format(session, uri, 0, 3)) == []


async def test_delegations_and_routines_are_checked_against_the_catalog_as_the_cli_does(session):
    """WR709 for a delegation to a workflow nobody has, none for one to a bundled workflow
    (coding-task) or to one in the workspace; WR703 for a routine template nobody has."""
    root = project(session, f"targets-{session.encoding}", "[tool.workrail]\n")
    (root / "workflows" / "helper.json").write_text(
        json.dumps({"id": "helper", "name": "H", "version": "1.0.0", "steps": STEPS}, indent=2)
    )
    delegating = {
        "id": "delegating",
        "name": "D",
        "version": "1.0.0",
        "steps": [
            {
                "id": "fan-out",
                "title": "Fan out",
                "type": "parallel",
                "parallelDelegations": [
                    {"workflowId": "coding-task"},
                    {"workflowId": "helper"},
                    {"workflowId": "nobody-has-this"},
                ],
            },
            {
                "id": "call",
                "title": "Call",
                "templateCall": {"templateId": "wr.templates.routine.absent"},
            },
        ],
    }
    text = json.dumps(delegating, indent=2)
    path = root / "workflows" / "delegating.json"
    path.write_text(text)
    uri = session.open(str(path.relative_to(session.root)), text)
    cli = await workrail("validate", "--format", "json", stdin="", cwd=root)
    by_path = {f["path"]: f["diagnostics"] for f in json.loads(cli.stdout)["files"]}
    expected = sorted((d["code"], d["pointer"]) for d in by_path["workflows/delegating.json"])
    assert expected == [
        ("WR703", "/steps/1/templateCall/templateId"),
        ("WR709", "/steps/0/parallelDelegations/2/workflowId"),
    ]

    def found(items) -> list[tuple[str, str]]:
        return sorted((str(d.code), d.data["pointer"]) for d in items)

    # Until a scan has read helper.json (written just now), `helper` is unknown too: VS Code's
    # watcher tells the server of the new files; a pull client's next pull finds a scan due.
    await config_changed(session, uri, root / "workflows" / "helper.json", path)
    await session.diagnostics_until(uri, lambda items: found(items) == expected)
