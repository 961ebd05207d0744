"""`workrail sources`: every workflow source of a project, and its Git repositories' sync and lock.

- ``workrail sources`` lists each source (bundled, user, paths, repositories, project, extra) with
  its workflow count and the ids later sources shadow; a repository with its commit, whether the
  lock holds it, and its last sync.
- ``workrail sources sync`` fetches every repository now (progress on stderr); with a lock, the
  locked commits are made sure of and not moved.
- ``workrail sources lock`` writes ``.workrail/sources.lock``: the commits locked stay, a source
  not yet in it is resolved (fetched) and added, one no longer declared is dropped.
- ``workrail sources update [NAME]`` re-resolves NAME (or every source) from its remote and
  rewrites the lock.

Exit status: 0 done (a repository served from its cache because its remote could not be reached
is a warning), 1 a repository could not be fetched and has nothing cached (or git is missing),
2 a declaration or the lock cannot be read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workrail_engine.cli.browse import render_table

if TYPE_CHECKING:
    from workrail_engine.catalog import Catalog
    from workrail_engine.cli.console import Console
    from workrail_engine.sources.cache import SyncOutcome
    from workrail_engine.sources.declared import RepoSource
    from workrail_engine.sources.served import Declared

__all__ = ["run_lock", "run_sources", "run_sync", "run_update"]

COLUMNS = ("source", "workflows", "commit", "synced", "shadowed", "where")


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else ""


def _source_rows(catalog: Catalog, project: Path) -> list[dict[str, Any]]:
    from workrail_engine.catalog import source_counts
    from workrail_engine.sources.served import served_repositories

    served, _ = served_repositories(project)
    by_directory = {s.directory: s for s in served if s.directory is not None}
    rows = []
    for count in source_counts(catalog):
        source = count.source
        row: dict[str, Any] = {
            "source": source.label,
            "kind": source.kind,
            "where": str(source.directory),
            "workflows": count.served,
            "shadowed": list(count.shadowed),
        }
        repo = by_directory.get(source.directory)
        if repo is not None:
            row.update(
                url=repo.source.url,
                rev=repo.source.rev,
                commit=repo.commit,
                locked=repo.locked,
                synced=repo.synced,
            )
        rows.append(row)
    # A repository that cannot be served has no catalog source; it is listed all the same.
    rows += [
        {
            "source": f"repo:{s.source.name}",
            "kind": "repo",
            "where": "(not served)",
            "workflows": 0,
            "shadowed": [],
            "url": s.source.url,
            "rev": s.source.rev,
            "commit": s.commit,
            "locked": s.locked,
            "synced": s.synced,
        }
        for s in served
        if s.directory is None
    ]
    return rows


def _text_row(row: dict[str, Any]) -> dict[str, str]:
    commit = (row.get("commit") or "")[:12]
    if commit and row.get("locked"):
        commit += " (locked)"
    where = row["where"] if "url" not in row else f"{row['url']} @ {row.get('rev') or 'HEAD'}"
    return {
        "source": row["source"],
        "workflows": str(row["workflows"]),
        "commit": commit,
        "synced": _when(row.get("synced")),
        "shadowed": ", ".join(row["shadowed"]),
        "where": where,
    }


def run_sources(catalog: Catalog, project: Path, *, fmt: str, console: Console) -> int:
    rows = _source_rows(catalog, project)
    for warning in catalog.source_warnings:
        console.warning(warning)
    if fmt == "json":
        console.out(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        console.out(render_table([_text_row(r) for r in rows], COLUMNS))
    return 0


def _declared_and_locked(
    project: Path, console: Console
) -> tuple[Declared, dict[tuple[str, str | None], str]] | None:
    """The repositories declared and the lock's commits ({} without a lock); None (each problem
    reported) when a declaration or the lock cannot be read."""
    from workrail_engine.sources.lock import LockError, read_lock
    from workrail_engine.sources.served import declared_sources

    declared = declared_sources(project)
    for problem in declared.problems:
        console.error(problem)
    if declared.problems:
        return None
    assert declared.root is not None
    try:
        return declared, read_lock(declared.root) or {}
    except LockError as error:
        console.error(str(error))
        return None


def _sync_each(
    sources: Sequence[RepoSource],
    locked: dict[tuple[str, str | None], str],
    console: Console,
) -> list[SyncOutcome] | None:
    """Each source synced (at its locked commit when it has one); None when git is missing."""
    from workrail_engine.sources.cache import sync
    from workrail_engine.sources.git import GitMissing

    outcomes = []
    for source in sources:
        try:
            outcome = sync(
                source, commit=locked.get((source.url, source.rev)), progress=console.err
            )
        except GitMissing as error:
            console.error(str(error))
            return None
        for note in outcome.notes:
            console.warning(f"{source.name}: {note}")
        if outcome.warning:
            console.warning(outcome.warning)
        if outcome.error:
            console.error(outcome.error)
        outcomes.append(outcome)
    return outcomes


def _report(outcomes: Sequence[SyncOutcome], console: Console) -> int:
    for outcome in outcomes:
        if outcome.commit is None:
            continue
        moved = (
            f"{outcome.previous[:12]} -> {outcome.commit[:12]}"
            if outcome.changed and outcome.previous
            else outcome.commit[:12]
        )
        console.out(f"{outcome.source.name}: {moved}")
    return 1 if any(o.commit is None for o in outcomes) else 0


def run_sync(project: Path, *, console: Console) -> int:
    found = _declared_and_locked(project, console)
    if found is None:
        return 2
    declared, locked = found
    if not declared.sources:
        console.err("No workflow repositories are declared (workflow-repos).")
        return 0
    outcomes = _sync_each(declared.sources, locked, console)
    return 1 if outcomes is None else _report(outcomes, console)


def _write_lock(
    declared: Declared, commits: dict[tuple[str, str | None], str], console: Console
) -> int:
    from workrail_engine.sources.lock import write_lock

    assert declared.root is not None
    path = write_lock(declared.root, [(s, commits[(s.url, s.rev)]) for s in declared.sources])
    console.err(f"wrote {path}")
    return 0


def _relock(project: Path, console: Console, names: Sequence[str] | None) -> int:
    """Write the lock: ``names`` (every source when empty) re-resolved from their remotes, the
    others kept at their locked commit (``names`` None: only those not locked are resolved)."""
    found = _declared_and_locked(project, console)
    if found is None:
        return 2
    declared, locked = found
    known = {s.name for s in declared.sources}
    unknown = [n for n in names or () if n not in known]
    if unknown:
        console.error(
            f"no workflow repository named {unknown[0]!r} (declared: {', '.join(sorted(known)) or 'none'})"
        )
        return 2
    renewed = {
        (s.url, s.rev)
        for s in declared.sources
        if names is not None and (not names or s.name in names)
    }
    kept = {key: commit for key, commit in locked.items() if key not in renewed}
    fresh = [s for s in declared.sources if (s.url, s.rev) not in kept]
    outcomes = _sync_each(fresh, {}, console)
    if outcomes is None:
        return 1
    if any(o.commit is None or o.warning for o in outcomes):
        console.error(
            "the lock was not written: a repository could not be resolved from its remote"
        )
        return 1
    _report(outcomes, console)
    resolved = {**kept, **{(o.source.url, o.source.rev): o.commit or "" for o in outcomes}}
    return _write_lock(declared, resolved, console)


def run_lock(project: Path, *, console: Console) -> int:
    return _relock(project, console, None)


def run_update(project: Path, names: Sequence[str], *, console: Console) -> int:
    return _relock(project, console, list(names))
