"""Which workflow a run is of: a catalog id, or a path — confined to the catalog's directories
when the caller is an agent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import platformdirs

from ..errors import InvalidWorkflow, SecurityViolation
from ..ids import is_workflow_id

__all__ = ["database_url", "project_of", "resolve_workflow", "store_exists", "store_home"]

_SUFFIXES = (".json", ".yaml", ".yml")


def store_home(create: bool = True) -> Path:
    """Where runs are stored: ``$WORKRAIL_HOME/runs``, else the user data directory."""
    home = os.environ.get("WORKRAIL_HOME")
    base = (
        Path(home).expanduser()
        if home
        else Path(platformdirs.user_data_dir("workrail", appauthor=False))
    )
    path = base / "runs"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def store_exists() -> bool:
    """Whether there may be runs to see or recover (without creating anything)."""
    return database_url() is not None or (store_home(create=False) / "runs.sqlite").exists()


def database_url() -> str | None:
    return os.environ.get("WORKRAIL_DATABASE_URL") or None


def project_of(catalog: Any) -> Path:
    """The project directory: the parent of the catalog's first project source (``./workflows``)."""
    for source in getattr(catalog, "sources", []):
        if source.kind == "project":
            directory = Path(source.directory)
            return (
                directory.parent.parent
                if directory.parent.name == ".workrail"
                else directory.parent
            )
    return Path.cwd()


def _looks_like_path(name: str) -> bool:
    return "/" in name or os.sep in name or name.endswith(_SUFFIXES)


def _confined(catalog: Any, path: Path) -> None:
    roots = [Path(s.directory).resolve() for s in getattr(catalog, "sources", [])]
    if not any(path == root or root in path.parents for root in roots):
        raise SecurityViolation(
            f"workflow path {str(path)!r} is outside the workflow directories",
            workflow_path=str(path),
        )


def resolve_workflow(
    catalog: Any, name: str, *, any_path: bool, base: Path | None = None
) -> tuple[dict, str]:
    """(definition, where it came from); raises WorkflowNotFound, InvalidWorkflow, SecurityViolation."""
    if is_workflow_id(name) and not name.endswith(_SUFFIXES):
        entry = catalog.get(name)
        return catalog.served(name), str(entry.path)
    if not _looks_like_path(name):
        catalog.get(name)  # raises WorkflowNotFound with the closest ids
    path = Path(name)
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    path = path.resolve()
    if not any_path:
        _confined(catalog, path)
    from ..lint import lint_path

    linted = lint_path(path)
    if linted.errors:
        first = linted.errors[0]
        raise InvalidWorkflow(
            f"{path}: {len(linted.errors)} error(s); first: {first.code} {first.message} at {first.pointer or '/'}",
            diagnostics=[d.to_dict() for d in linted.diagnostics],
        )
    return catalog.serve_file(linted.document.value), str(path)
