"""Which workflow a run is of: a catalog id, or a path — confined to the catalog's directories
when the caller is an agent."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..definition.ids import is_workflow_id
from ..errors import InvalidWorkflow, RunNotFound, SecurityViolation
from ..home import workrail_home

if TYPE_CHECKING:
    from ..catalog import CatalogProtocol

__all__ = [
    "database_url",
    "project_of",
    "resolve_workflow",
    "run_ids_explained",
    "store_exists",
    "store_home",
]

_SUFFIXES = (".json", ".yaml", ".yml")


def store_home(create: bool = True) -> Path:
    """Where runs are stored: ``runs/`` in WorkRail's home (next to the user's ``workflows/``)."""
    path = workrail_home() / "runs"
    if create:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)  # private: see sqlite_store
    return path


def store_exists() -> bool:
    """Whether there may be runs to see or recover (without creating anything)."""
    return database_url() is not None or (store_home(create=False) / "runs.sqlite").exists()


def database_url() -> str | None:
    return os.environ.get("WORKRAIL_DATABASE_URL") or None


def project_of(catalog: CatalogProtocol) -> Path:
    """The project directory: the parent of the catalog's first project source (``./workflows``)."""
    for source in catalog.sources:
        if source.kind == "project":
            directory = Path(source.directory)
            return (
                directory.parent.parent
                if directory.parent.name == ".workrail"
                else directory.parent
            )
    return Path.cwd()


@contextmanager
def run_ids_explained(catalog: CatalogProtocol, start_one: Callable[[str], str]) -> Iterator[None]:
    """A workflow id given where a run id belongs is said to be one; ``start_one(workflow_id)``
    is the front end's words for starting a run of it ("call run_workflow to start one")."""
    try:
        yield
    except RunNotFound as error:
        run_id = error.data.get("runId", "")
        if run_id in set(catalog.ids()):
            raise RunNotFound(
                run_id,
                error.data.get("runsOfWorkflow") or error.data.get("closest", ()),
                workflow_id=run_id,
                action=start_one(run_id),
            ) from None
        raise


def _looks_like_path(name: str) -> bool:
    return "/" in name or os.sep in name or name.endswith(_SUFFIXES)


def _confined(catalog: CatalogProtocol, path: Path) -> None:
    roots = [Path(s.directory).resolve() for s in catalog.sources]
    if not any(path == root or root in path.parents for root in roots):
        raise SecurityViolation(
            f"workflow path {str(path)!r} is outside the workflow directories",
            workflow_path=str(path),
        )


def resolve_workflow(
    catalog: CatalogProtocol, name: str, *, any_path: bool, base: Path | None = None
) -> tuple[dict[str, Any], str]:
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
    definition = linted.document.value
    if not isinstance(definition, dict):  # a clean lint means an object; said for the types
        raise InvalidWorkflow(f"{path}: a workflow is a JSON object")
    return catalog.serve_file(definition), str(path)
