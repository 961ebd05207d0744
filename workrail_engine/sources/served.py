"""Which repositories a project declares, and what of each is served now — from the cache only.

The catalog asks `served_repositories` at start and whenever the project changes; it never
waits on the network: a source is served at the commit of the lock when the project has one,
else at the commit its last sync resolved to. A source never fetched, or a locked commit not in
the cache, is a warning naming the source and what to run (``workrail sources sync``), never an
error that stops the others.

Declarations, in the order they are layered (a later one's workflow with the same id wins):
the user's configuration (``workflow-repos`` in ``~/.workrail/config.toml``), the environment
(``WORKRAIL_WORKFLOW_REPOS``, then upstream's variables), the project's configuration.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..home import workrail_home
from ..limits import MAX_CONFIG_BYTES
from ..text.regular_files import UnreadableFile, read_regular_file
from .cache import CachedRepository
from .declared import DeclarationError, RepoSource, environment_sources, parse_repo_entries
from .git import Git, GitError
from .lock import Locked, LockError, read_lock
from .urls import UrlRefused

__all__ = [
    "Declared",
    "ServedRepository",
    "declared_sources",
    "project_root",
    "served_repositories",
    "user_config_path",
]


def user_config_path() -> Path:
    return workrail_home() / "config.toml"


@dataclass
class Declared:
    sources: list[RepoSource] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Declarations that could not be read (each names its file or variable)."""
    root: Path | None = None
    """The project's root: where its configuration (and the lock) lives."""


def project_root(project_dir: Path) -> Path:
    """The folder of the project's configuration file; else ``project_dir``."""
    from ..project_config import ConfigError, find_config

    try:
        root = find_config(project_dir).root
    except ConfigError:
        root = None
    return root if root is not None else Path(project_dir).resolve()


def _user_sources() -> list[RepoSource]:
    path = user_config_path()
    if not path.exists():
        return []
    try:
        document = tomllib.loads(read_regular_file(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except (UnreadableFile, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise DeclarationError(f"{path}: cannot be read as TOML: {error}") from None
    value = document.get("workflow-repos")
    return [] if value is None else list(parse_repo_entries(value, str(path)))


def declared_sources(project_dir: Path) -> Declared:
    from ..project_config import ConfigError, find_config

    declared = Declared(root=project_root(project_dir))
    layers = (_user_sources, environment_sources, lambda: find_config(project_dir).workflow_repos)
    for layer in layers:
        try:
            declared.sources.extend(layer())
        except (DeclarationError, UrlRefused, ConfigError) as error:
            declared.problems.append(str(error))
    return declared


@dataclass(frozen=True)
class ServedRepository:
    source: RepoSource
    commit: str | None
    directory: Path | None
    """The folder of workflows served (None: nothing is, see ``warning``)."""
    locked: bool
    synced: float | None
    warning: str | None = None


def _locked_commits(root: Path | None, problems: list[str]) -> Locked | None:
    if root is None:
        return None
    try:
        return read_lock(root)
    except LockError as error:
        problems.append(str(error))
        return None


def served_repositories(project_dir: Path) -> tuple[list[ServedRepository], list[str]]:
    """Each declared repository as served now, and the warnings (declarations that could not be
    read, a bad lock). Reads the cache only."""
    declared = declared_sources(project_dir)
    warnings = list(declared.problems)
    locked = _locked_commits(declared.root, warnings)
    return [_served(source, locked) for source in declared.sources], warnings


def _served(source: RepoSource, locked: Locked | None) -> ServedRepository:
    cache = CachedRepository(source.url)
    last = cache.synced(source.rev)
    synced = float(last["synced"]) if last and isinstance(last.get("synced"), int | float) else None
    lock_commit = locked.get((source.url, source.rev)) if locked is not None else None
    commit = lock_commit or (last["commit"] if last else None)
    if commit is None:
        why = "never fetched" if locked is None else "not in the lock and never fetched"
        return ServedRepository(
            source, None, None, False, synced,
            f"workflow repository {source.describe()} is {why}: run `workrail sources sync`",
        )  # fmt: skip
    tree = cache.tree(commit)
    if not tree.is_dir() and cache.mirror.is_dir():
        try:  # a locked commit fetched before: its tree is written from the clone, no network
            git = Git(source.url)
            if cache.has_commit(git, commit):
                cache.export(git, commit)
        except GitError:
            pass
    if not tree.is_dir():
        return ServedRepository(
            source, commit, None, lock_commit is not None, synced,
            f"workflow repository {source.describe()}: commit {commit[:12]} is not in the cache: "
            "run `workrail sources sync`",
        )  # fmt: skip
    directory = tree / source.path if source.path else tree
    warning = None
    if not directory.is_dir():
        warning = (
            f"workflow repository {source.describe()}: no folder {source.path!r} in commit "
            f"{commit[:12]}"
        )
    return ServedRepository(source, commit, directory, lock_commit is not None, synced, warning)
