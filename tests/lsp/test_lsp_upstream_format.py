"""Upstream WorkRail's format in the editor: no red on valid files, the right code on invalid
ones, and completion and hover that explain the new keys (over the real protocol)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "upstream"
VALID = FIXTURES / "workflows" / "team.release-review.json"
INVALID = sorted(
    p
    for p in (FIXTURES / "invalid").glob("*.json")
    if not p.stem.startswith("WR703")  # needs the catalog: a `workrail validate` check
)


async def test_a_valid_upstream_workflow_has_no_errors_or_warnings_but_one(session):
    uri = session.open("workflows/team.release-review.json", VALID.read_text())
    found = await session.diagnostics(uri)
    by_severity = {
        (str(d.code), d.severity)
        for d in found
        if d.severity != types.DiagnosticSeverity.Information
    }
    assert by_severity == {("WR405", types.DiagnosticSeverity.Warning)}
    hints = [d for d in found if d.severity == types.DiagnosticSeverity.Information]
    assert {str(d.code) for d in hints} == {"WR306"}


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
async def test_invalid_upstream_constructs_get_their_code(session, path: Path):
    uri = session.open(f"workflows/invalid/{path.name}", path.read_text())
    found = await session.diagnostics(uri)
    errors = [str(d.code) for d in found if d.severity == types.DiagnosticSeverity.Error]
    assert errors == [path.stem.split("-", 1)[0]]


HEAD = """{
  "id": "wr.completion-flow",
  "name": "Completion",
"""


async def items_at(session, name, text):
    clean, position = session.position(text)
    uri = session.open(name, clean)
    return {item.label: item for item in await session.completion(uri, position)}


def documented(item: types.CompletionItem) -> str:
    doc = item.documentation
    return doc.value if isinstance(doc, types.MarkupContent) else str(doc or "")


async def test_top_level_completion_offers_upstream_keys_with_their_documentation(session):
    found = await items_at(session, "workflows/c1.json", HEAD + '  "|\n}\n')
    for key in (
        "about",
        "metricsProfile",
        "recommendedPreferences",
        "features",
        "assessments",
        "functionDefinitions",
        "references",
        "extensionPoints",
        "modelTier",
        "validatedAgainstSpecVersion",
        "examples",
    ):
        assert key in found, key
        assert documented(found[key]), key
    assert "catalog" in documented(found["about"]).lower()


async def test_step_completion_offers_upstream_step_keys(session):
    text = HEAD + '  "steps": [\n    {"id": "plan", "title": "Plan", "|\n  ]\n}\n'
    found = await items_at(session, "workflows/c2.json", text)
    for key in (
        "promptBlocks",
        "promptFragments",
        "templateCall",
        "outputContract",
        "assessmentRefs",
        "functionReferences",
        "hasValidation",
        "notesOptional",
        "requireConfirmation",
        "modelTier",
    ):
        assert key in found, key
        assert documented(found[key]), key


async def test_enum_completion_for_upstream_values(session):
    found = await items_at(session, "workflows/c3.json", HEAD + '  "metricsProfile": "|"\n}\n')
    assert {"coding", "review", "research", "design", "ticket", "none"} <= set(found)
    text = (
        HEAD
        + '  "steps": [{"id": "plan", "title": "Plan", "prompt": "p", "requireConfirmation": {"kind": "|"}}]\n}\n'
    )
    found = await items_at(session, "workflows/c4.json", text)
    assert {"human_approval", "coordinator_eval"} <= set(found)


HOVERED = VALID.read_text()


async def hover_before(session, name, marker):
    at = HOVERED.index(marker)
    clean, position = session.position(HOVERED[:at] + "|" + HOVERED[at:])
    uri = session.open(name, clean)
    return await session.hover(uri, position)


@pytest.mark.parametrize(
    ("marker", "words"),
    [
        ('metricsProfile"', "metrics"),
        ('promptBlocks"', "goal"),
        ('conditionSource"', "artifact"),
        ('templateCall"', "routine"),
        ('parallelDelegations"', "sub-agent"),
        ('outputContract"', "contract"),
    ],
)
async def test_hover_explains_upstream_keys(session, marker, words):
    text = await hover_before(session, f"workflows/h-{marker[:-1]}.json", marker)
    assert text is not None and words in text.lower(), text


async def test_an_example_sharing_an_id_is_no_duplicate(session):
    # The catalog serves no examples/ folder, so the workspace's duplicate-id check skips it too.
    body = {
        "id": "wr.shared-example",
        "name": "E",
        "steps": [{"id": "one", "title": "t", "prompt": "p"}],
    }
    example = session.root / "workflows" / "examples" / "wr.shared-example.json"
    example.parent.mkdir(parents=True, exist_ok=True)
    example.write_text(json.dumps(body), encoding="utf-8")
    served = session.root / "workflows" / "routines" / "wr.shared-example.json"
    served.parent.mkdir(parents=True, exist_ok=True)
    served.write_text(json.dumps(body), encoding="utf-8")
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=p.as_uri(), type=types.FileChangeType.Created)
                for p in (example, served)
            ]
        )
    )
    uri = session.open("workflows/wr.shared-example.json", json.dumps(body, indent=2))
    items = await session.diagnostics_until(uri, lambda ds: any(d.code == "WR603" for d in ds))
    assert [str(d.code) for d in items] == ["WR603"]  # the routines/ copy is served: a real clash
    assert "examples" not in str(
        [
            r.location.uri
            for d in await session.diagnostics(uri)
            for r in d.related_information or []
        ]
    )
