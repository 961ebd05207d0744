"""Which workflow repositories a project uses: ``workflow-repos`` in the project's configuration
and in the user's, ``WORKRAIL_WORKFLOW_REPOS``, and upstream WorkRail's variables.

Each entry is a table (or, in the environment, a JSON object)::

    workflow-repos = [
        {url = "https://github.com/acme/workflows.git", rev = "v1.4.0", path = "workflows"},
        {url = "git@github.com:acme/drafts.git", rev = "main", name = "drafts"},
    ]

``rev`` is a tag or a full commit id (pinned) or a branch (followed: ``workrail sources sync`` and
the servers' background refresh move to its newest commit); without it the remote's default
branch is followed. ``path`` is the folder inside the repository the workflows are read from.
``name`` (default: the last part of the URL without ``.git``) is what ``workrail sources update
NAME`` and every message call it.

The environment: ``WORKRAIL_WORKFLOW_REPOS`` is a JSON array of such objects, or a comma list of
URLs, each optionally ``URL#REV``. Upstream's ``WORKFLOW_GIT_REPOS`` (a comma list of URLs, or a
JSON array of ``{repositoryUrl, branch, syncInterval}``) and ``WORKFLOW_GIT_REPO_URL`` with
``WORKFLOW_GIT_REPO_BRANCH`` and ``WORKFLOW_GIT_SYNC_INTERVAL`` (minutes) are read too, so an
upstream set-up works unchanged.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .urls import check_url, display_url

__all__ = [
    "DeclarationError",
    "RepoSource",
    "environment_sources",
    "parse_repo_entries",
]

_ENTRY_KEYS = frozenset({"url", "rev", "path", "name", "sync-interval"})
# A branch, a tag or a commit id: what `git check-ref-format` accepts, minus what could be read
# as an option or a range.
_REV = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)[A-Za-z0-9._/+-]{1,200}(?<![./])$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
COMMIT_ID = re.compile(r"^[0-9a-f]{40}$")


class DeclarationError(ValueError):
    """A ``workflow-repos`` entry (or an environment variable) that says something we refuse."""


@dataclass(frozen=True, slots=True)
class RepoSource:
    """One declared workflow repository."""

    url: str
    rev: str | None
    path: str
    name: str
    declared_in: str
    """Where it was declared: a configuration file's path or an environment variable's name."""
    sync_interval: float | None = None
    """Seconds between background refreshes of a followed branch (None: the server's default)."""

    @property
    def pinned(self) -> bool:
        """A commit id or a tag: its commit never moves. (A tag is told from a branch only by
        the fetched repository; `cache.resolve` asks it, this is the quick answer for a commit.)"""
        return self.rev is not None and bool(COMMIT_ID.match(self.rev))

    @property
    def rev_label(self) -> str:
        return self.rev or "(default branch)"

    def describe(self) -> str:
        return f"{self.name} ({display_url(self.url)} @ {self.rev_label})"


def _default_name(url: str) -> str:
    tail = re.split(r"[/:]", url.rstrip("/"))[-1]
    tail = tail[:-4] if tail.endswith(".git") else tail
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", tail).strip("-.") or "repo"
    return cleaned[:100]


def _check_path(path: str, where: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if path.startswith(("/", "\\")) or any(p == ".." for p in parts) or "\0" in path:
        raise DeclarationError(
            f"{where}: 'path' must be a folder inside the repository, not {path!r}"
        )
    return "/".join(parts)


def _entry(raw: Any, where: str, sync_minutes: Any = None) -> RepoSource:
    if not isinstance(raw, Mapping):
        raise DeclarationError(f"{where}: each workflow-repos entry must be a table with a 'url'")
    unknown = sorted(set(raw) - _ENTRY_KEYS)
    if unknown:
        raise DeclarationError(
            f"{where}: unknown key {unknown[0]!r} in a workflow-repos entry "
            f"(known: {', '.join(sorted(_ENTRY_KEYS))})"
        )
    url = raw.get("url")
    if not isinstance(url, str) or not url.strip():
        raise DeclarationError(f"{where}: a workflow-repos entry needs a 'url' string")
    url = check_url(url.strip(), where)
    rev = raw.get("rev")
    if rev is not None and (not isinstance(rev, str) or not _REV.match(rev)):
        raise DeclarationError(
            f"{where}: 'rev' of {display_url(url)} must be a branch, a tag or a commit id, not {rev!r}"
        )
    path = raw.get("path", "")
    if not isinstance(path, str):
        raise DeclarationError(f"{where}: 'path' of {display_url(url)} must be a string")
    name = raw.get("name", _default_name(url))
    if not isinstance(name, str) or not _NAME.match(name):
        raise DeclarationError(
            f"{where}: 'name' must be letters, digits, '.', '_' or '-' (at most 100), not {name!r}"
        )
    interval = raw.get("sync-interval", sync_minutes)
    seconds: float | None = None
    if interval is not None:
        try:
            seconds = float(interval) * 60
        except (TypeError, ValueError):
            raise DeclarationError(
                f"{where}: 'sync-interval' is in minutes, a number, not {interval!r}"
            ) from None
        if seconds <= 0:
            raise DeclarationError(f"{where}: 'sync-interval' must be more than 0 minutes")
    return RepoSource(url, rev, _check_path(path, where), name, where, seconds)


def parse_repo_entries(value: Any, where: str) -> tuple[RepoSource, ...]:
    """The ``workflow-repos`` value of a configuration file (``where`` names it in errors)."""
    if not isinstance(value, list):
        raise DeclarationError(f"{where}: 'workflow-repos' must be a list of tables")
    return tuple(_entry(item, where) for item in value)


def _from_list_text(text: str, where: str, branch: str | None = None) -> list[RepoSource]:
    """A comma list of URLs, each optionally ``URL#REV``."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        url, _, rev = item.partition("#")
        out.append(_entry({"url": url, **({"rev": rev or branch} if rev or branch else {})}, where))
    return out


def _workrail_variable(text: str) -> list[RepoSource]:
    where = "WORKRAIL_WORKFLOW_REPOS"
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as error:
            raise DeclarationError(f"{where}: not a JSON array: {error}") from None
        return list(parse_repo_entries(items, where))
    return _from_list_text(text, where)


def _upstream_variable(text: str) -> list[RepoSource]:
    where = "WORKFLOW_GIT_REPOS"
    if not text.lstrip().startswith("["):
        return _from_list_text(text, where)
    try:
        items = json.loads(text)
    except json.JSONDecodeError as error:
        raise DeclarationError(f"{where}: not a JSON array: {error}") from None
    if not isinstance(items, list):
        raise DeclarationError(f"{where}: must be a JSON array")
    out = []
    for item in items:
        if not isinstance(item, Mapping):
            raise DeclarationError(f"{where}: each item must be an object with repositoryUrl")
        raw = {"url": item.get("repositoryUrl") or item.get("url")}
        if item.get("branch"):
            raw["rev"] = item["branch"]
        out.append(_entry(raw, where, item.get("syncInterval")))
    return out


def environment_sources(environ: Mapping[str, str] | None = None) -> list[RepoSource]:
    """The repositories the environment declares, WorkRail's variable first, then upstream's."""
    env = os.environ if environ is None else environ
    out: list[RepoSource] = []
    if env.get("WORKRAIL_WORKFLOW_REPOS", "").strip():
        out += _workrail_variable(env["WORKRAIL_WORKFLOW_REPOS"])
    if env.get("WORKFLOW_GIT_REPOS", "").strip():
        out += _upstream_variable(env["WORKFLOW_GIT_REPOS"])
    single = env.get("WORKFLOW_GIT_REPO_URL", "").strip()
    if single:
        raw: dict[str, Any] = {"url": single}
        if env.get("WORKFLOW_GIT_REPO_BRANCH", "").strip():
            raw["rev"] = env["WORKFLOW_GIT_REPO_BRANCH"].strip()
        out.append(
            _entry(raw, "WORKFLOW_GIT_REPO_URL", env.get("WORKFLOW_GIT_SYNC_INTERVAL") or None)
        )
    return out
