"""A workflow's references looked up at a session's start: resolved only for a regular file
inside its base (the workspace, or the folder that ships the workflow), never beyond it."""

from __future__ import annotations

from pathlib import Path

import pytest

from workrail_engine.sessions.reference_paths import MAX_REFERENCES_LOOKED_UP, resolve_references


def reference(source: str, **extra: object) -> dict[str, object]:
    return {
        "id": "doc",
        "title": "Doc",
        "source": source,
        "purpose": "Read it",
        "authoritative": False,
        **extra,
    }


@pytest.fixture
def bases(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace and a package folder, each with a guide, and a secret beside them."""
    workspace, package = tmp_path / "workspace", tmp_path / "package"
    for base in (workspace, package):
        (base / "docs").mkdir(parents=True)
        (base / "docs" / "guide.md").write_text("# guide")
    (tmp_path / "secret.md").write_text("not the workflow's business")
    (workspace / "docs" / "out").symlink_to(tmp_path / "secret.md")
    (workspace / "docs" / "in").symlink_to(workspace / "docs" / "guide.md")
    return workspace, package


@pytest.mark.parametrize(
    ("source", "extra", "resolved"),
    [
        pytest.param("docs/guide.md", {}, "workspace/docs/guide.md", id="in the workspace"),
        pytest.param("./docs/../docs/guide.md", {}, "workspace/docs/guide.md", id="normalized"),
        pytest.param(
            "docs/guide.md",
            {"resolveFrom": "package"},
            "package/docs/guide.md",
            id="in the package folder",
        ),
        pytest.param("docs/in", {}, "workspace/docs/in", id="a link that stays inside"),
        pytest.param("docs/missing.md", {}, None, id="missing"),
        pytest.param("docs", {}, None, id="a directory"),
        pytest.param("../secret.md", {}, None, id="above the workspace"),
        pytest.param("docs/out", {}, None, id="a link out of the workspace"),
        pytest.param("SECRET", {}, None, id="an absolute path"),
        pytest.param("docs/\x00guide.md", {}, None, id="a NUL in the name"),
        pytest.param("a/" * 3000, {}, None, id="a name too long"),
    ],
)
def test_a_reference_resolves_only_to_a_regular_file_inside_its_base(
    bases: tuple[Path, Path], source: str, extra: dict[str, object], resolved: str | None
) -> None:
    workspace, package = bases
    if source == "SECRET":
        source = str(workspace.parent / "secret.md")
    [found] = resolve_references(
        {"references": [reference(source, **extra)]}, str(workspace), package
    )
    assert found["resolveFrom"] == extra.get("resolveFrom", "workspace")
    if resolved is None:
        assert found["status"] == "unresolved" and "resolvedPath" not in found
    else:
        assert found["status"] == "resolved"
        assert found["resolvedPath"] == str(workspace.parent / resolved)


def test_references_keep_their_declared_keys_and_order(bases: tuple[Path, Path]) -> None:
    workspace, _ = bases
    declared = [reference("docs/guide.md", id="first"), reference("nope.md", id="second")]
    found = resolve_references({"references": declared}, str(workspace), None)
    assert [r["id"] for r in found] == ["first", "second"]
    assert list(found[0]) == [
        "id",
        "title",
        "source",
        "purpose",
        "authoritative",
        "resolveFrom",
        "status",
        "resolvedPath",
    ]
    package = resolve_references(
        {"references": [reference("docs/guide.md", resolveFrom="package")]}, str(workspace), None
    )
    assert package[0]["status"] == "unresolved"  # no folder ships this workflow


def test_only_the_first_references_are_looked_up(bases: tuple[Path, Path]) -> None:
    workspace, _ = bases
    many = [reference("docs/guide.md", id=f"doc-{n}") for n in range(MAX_REFERENCES_LOOKED_UP + 1)]
    found = resolve_references({"references": many}, str(workspace), None)
    assert len(found) == MAX_REFERENCES_LOOKED_UP + 1
    assert {r["status"] for r in found[:-1]} == {"resolved"}
    assert found[-1]["status"] == "unresolved"
