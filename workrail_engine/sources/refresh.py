"""The long-lived servers' background refresh of followed branches.

The MCP server and the language server start one `BackgroundRefresh`: a daemon thread that
fetches each followed workflow repository of their projects (a branch, or no rev: the remote's
default branch) once at start and then every interval, and tells its server when a commit moved,
so that the catalog serves the new commit's tree without a restart. Nothing waits for it: the
servers read the cache at start as before, and a request never waits on the network.

Not refreshed: a commit id or a tag (pinned: its commit never moves; a tag is known as one after
its first sync), and every repository of a project that has ``.workrail/sources.lock`` (everyone
reads exactly the locked commits until ``workrail sources update``).

The interval: a declaration's ``sync-interval`` (minutes; upstream's ``WORKFLOW_GIT_SYNC_INTERVAL``),
at least ``MIN_SYNC_INTERVAL_SECONDS`` whatever a project says, else
``DEFAULT_SYNC_INTERVAL_SECONDS``. ``WORKRAIL_SYNC_INTERVAL_SECONDS`` (the person's environment,
for tests and CI) sets every repository's interval, at least ``MIN_SYNC_INTERVAL_OVERRIDE_SECONDS``.

A remote that cannot be reached keeps the cached commit served; the warning is logged once (until
a sync of that repository succeeds again), not at every interval.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .cache import CachedRepository, sync
from .declared import RepoSource
from .git import GitMissing
from .lock import LockError, read_lock
from .served import declared_sources

__all__ = [
    "DEFAULT_SYNC_INTERVAL_SECONDS",
    "MIN_SYNC_INTERVAL_OVERRIDE_SECONDS",
    "MIN_SYNC_INTERVAL_SECONDS",
    "SYNC_INTERVAL_VARIABLE",
    "BackgroundRefresh",
    "followed_sources",
    "sync_interval",
]

log = logging.getLogger(__name__)

DEFAULT_SYNC_INTERVAL_SECONDS = 600.0
"""Seconds between background fetches of a followed branch when nothing says otherwise."""
MIN_SYNC_INTERVAL_SECONDS = 60.0
"""The shortest ``sync-interval`` a declaration gets (a project's configuration is shared: it
must not make every server of the team fetch without pause)."""
MIN_SYNC_INTERVAL_OVERRIDE_SECONDS = 1.0
"""The shortest interval ``WORKRAIL_SYNC_INTERVAL_SECONDS`` may set (it is the person's own)."""
SYNC_INTERVAL_VARIABLE = "WORKRAIL_SYNC_INTERVAL_SECONDS"


def _override(environ: Mapping[str, str]) -> float | None:
    text = environ.get(SYNC_INTERVAL_VARIABLE, "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        log.warning("%s=%r is not a number of seconds: ignored", SYNC_INTERVAL_VARIABLE, text)
        return None
    return max(seconds, MIN_SYNC_INTERVAL_OVERRIDE_SECONDS)


def sync_interval(source: RepoSource, environ: Mapping[str, str] | None = None) -> float:
    """Seconds between background fetches of ``source``."""
    override = _override(os.environ if environ is None else environ)
    if override is not None:
        return override
    if source.sync_interval is None:
        return DEFAULT_SYNC_INTERVAL_SECONDS
    return max(source.sync_interval, MIN_SYNC_INTERVAL_SECONDS)


def followed_sources(project_dirs: Sequence[Path]) -> list[RepoSource]:
    """The repositories of ``project_dirs`` a background refresh fetches: not a commit id, not a
    tag already resolved, none of a project with a lock (or a lock that cannot be read)."""
    found: dict[tuple[str, str | None], RepoSource] = {}
    for directory in project_dirs:
        declared = declared_sources(directory)
        try:
            if declared.root is None or read_lock(declared.root) is not None:
                continue
        except LockError:
            continue  # the catalog reports it; nothing is refreshed against a lock unread
        for source in declared.sources:
            if source.pinned:
                continue
            last = CachedRepository(source.url).synced(source.rev)
            if last is not None and not last.get("followed"):
                continue  # a tag: resolved once, pinned since
            found.setdefault((source.url, source.rev), source)
    return list(found.values())


class BackgroundRefresh:
    """Fetch the followed repositories of ``project_dirs()`` on a daemon thread, and call
    ``on_moved()`` (on that thread) when one of them moved to another commit."""

    def __init__(
        self,
        project_dirs: Callable[[], Sequence[Path]],
        on_moved: Callable[[], None],
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._project_dirs = project_dirs
        self._on_moved = on_moved
        self._environ = environ
        self._stopped = threading.Event()
        self._next: dict[tuple[str, str | None], float] = {}  # (url, rev) → monotonic time due
        self._warned: set[tuple[str, str | None]] = set()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name="workrail-sources-refresh", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                wait = self.refresh_due()
            except GitMissing as error:
                log.warning("%s; workflow repositories are not refreshed", error)
                return
            except Exception:  # a bug must not end the server: logged, tried again later
                log.exception("the background refresh of workflow repositories failed")
                wait = DEFAULT_SYNC_INTERVAL_SECONDS
            self._stopped.wait(wait)

    def refresh_due(self) -> float:
        """Fetch each followed repository that is due; the seconds until the next one is."""
        now = time.monotonic()
        moved = False
        sources = followed_sources(list(self._project_dirs()))
        for source in sources:
            key = (source.url, source.rev)
            if self._next.get(key, now) > now:
                continue
            interval = sync_interval(source, self._environ)
            outcome = sync(source, environ=dict(self._environ) if self._environ else None)
            self._next[key] = time.monotonic() + interval
            problem = outcome.warning or outcome.error
            if problem is None:
                self._warned.discard(key)
            elif key not in self._warned:
                self._warned.add(key)
                log.warning("background refresh: %s", problem)
            moved = moved or outcome.changed
        if moved:
            self._on_moved()
        due = [self._next[(s.url, s.rev)] for s in sources if (s.url, s.rev) in self._next]
        if due:
            return max(0.0, min(due) - time.monotonic())
        # None followed now; the projects may change (an MCP client's roots): look again later.
        return _override(os.environ if self._environ is None else self._environ) or (
            DEFAULT_SYNC_INTERVAL_SECONDS
        )
