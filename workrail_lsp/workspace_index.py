"""The workflow ids of every workflow file in the workspace, for duplicate-id diagnostics, and
the ids of the catalog's other sources (bundled, the user's, ``WORKRAIL_WORKFLOW_PATH``, and the
workflow repositories the workspace's projects declare, as served from their cache), which a
delegation or a routine template may name (WR709, WR703) and go-to-definition opens, but which
never clash with the workspace's (the catalog lets the project's shadow them).

Files on disk are read once per (size, mtime); an open document's text replaces its file's.
Ids are read with ``json.loads`` (a few ms per MB) rather than a full lint: only ``id`` matters.

The disk is scanned on a thread of its own, never while a request waits: a document's own
diagnostics are answered from what is known (nothing, at first), and when a scan finds that the
ids changed, ``on_change`` is called on the server's loop (which publishes again, or asks a pull
client to pull again). A scan is bounded in files (``MAX_SCAN_FILES``) and time
(``MAX_SCAN_SECONDS``), and a newer configuration cancels the one running.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from workrail_engine.text.document import parse_document
from workrail_engine.text.regular_files import UnreadableFile, read_regular_file

from .configuration import Settings
from .disk_files import ReadTimedOut, bounded_read

__all__ = [
    "MAX_SCAN_FILES",
    "MAX_SCAN_SECONDS",
    "WorkspaceIndex",
    "candidate_files",
    "workflow_id_of",
]

log = logging.getLogger(__name__)

_SKIP_DIRS = {
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    "dist",
    "build",
}
MAX_SCAN_FILES = 5000
"""JSON and YAML files one walk of the workspace collects (the workspace index, workspace
symbols, ``validateWorkspace``); the rest are left out, with a warning in the log."""
MAX_SCAN_SECONDS = 10.0
"""How long one scan of the workspace index may walk and read before it stops with what it has
(a root of 200,000 files took ~1 s here; a network mount can take much longer)."""
_RESCAN_SECONDS = 2.0  # the least time between the end of one scan and the start of the next
_RESCAN_FACTOR = 5  # ... and at least this many times as long as the last scan took
# A scan asked for while a request is being answered starts this much later, so that the answer
# (the first diagnostics of a document) is not slowed by a thread walking the disk.
_SCAN_START_DELAY = 0.05


def workflow_id_of(text: str, path: str) -> str | None:
    if path.endswith((".yaml", ".yml")):
        value = parse_document(text, path).value
    else:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
    workflow_id = value.get("id") if isinstance(value, dict) else None
    return workflow_id if isinstance(workflow_id, str) else None


class _Scan:
    """One walk of the workspace on its own thread; ``cancel()`` stops it at the next file."""

    def __init__(self, roots: list[Path], settings: Settings, known: dict[str, _Entry]) -> None:
        # The project configuration's workflow folders as they are when the scan starts, and the
        # modules that find the catalog's folders: imported here, on the server's thread, so that
        # the scan's thread imports nothing (an import under way when the server exits aborts the
        # interpreter). The folders themselves are found on the scan's thread: a workflow
        # repository's may need its tree written from the clone (`sources.served`).
        import workrail_engine.project_config
        import workrail_engine.sources.served  # noqa: F401
        from workrail_engine.catalog import SKIPPED_FOLDERS

        self.roots, self.settings, self.known = roots, settings.frozen(), known
        self.catalog_dirs: list[Path] = []
        self.skipped = SKIPPED_FOLDERS
        self.found: dict[str, _Entry] = {}
        self.elsewhere: dict[str, _Entry] = {}
        self.cancelled = threading.Event()
        self.seconds = 0.0
        # False when a bound stopped it: an id it did not reach is not known to be missing
        self.complete = True

    def cancel(self) -> None:
        self.cancelled.set()

    def run(self) -> None:
        began = time.monotonic()
        deadline = began + MAX_SCAN_SECONDS
        self.catalog_dirs = catalog_directories(self.roots)

        def stop() -> bool:
            if time.monotonic() > deadline:
                self.complete = False
                log.warning(
                    "the workspace scan stopped after %g s (MAX_SCAN_SECONDS); files not reached "
                    "are not checked for duplicate ids",
                    MAX_SCAN_SECONDS,
                )
                return True
            return self.cancelled.is_set()

        for roots, settings, into in (
            (self.roots, self.settings, self.found),
            (self.catalog_dirs, Settings(), self.elsewhere),
        ):
            paths = candidate_files(roots, settings, stop)
            if len(paths) >= MAX_SCAN_FILES:
                self.complete = False  # the walk was cut at the limit (or met it exactly)
            self._read(paths, into, stop)
        self.seconds = time.monotonic() - began

    def _read(self, paths: list[str], into: dict[str, _Entry], stop: Callable[[], bool]) -> None:
        for path in paths:
            if stop():
                break
            try:
                stat = os.stat(path)
            except OSError:
                continue
            key = (stat.st_size, stat.st_mtime)
            known = self.known.get(path)
            if known is not None and known[0] == key:
                into[path] = known
            elif into is self.found:
                into[path] = (key, _read_id(path, self.settings))
            elif _served(path, self.skipped):  # a catalog source: its JSON/YAML files are workflows
                into[path] = (key, _read_id(path, None))


_Entry = tuple[tuple[int, float], str | None]


class WorkspaceIndex:
    def __init__(self) -> None:
        self.roots: list[Path] = []
        self.settings = Settings()
        self._disk: dict[str, _Entry] = {}
        self._elsewhere: dict[str, _Entry] = {}
        self._scanned = False  # whether a scan has ended: until then no id is known missing
        self._complete = False  # whether the last one read everything (no bound stopped it)
        self._open: dict[str, str | None] = {}
        self._next_scan = 0.0  # time.monotonic() from which a scan is due
        self._scan: _Scan | None = None  # the one running
        # The workflow folders (settings and project configuration) the last scan started with.
        self._scanned_dirs: tuple[str, ...] | None = None
        self.generation = 0
        # Called (on the loop that asked for the scan) when a scan changed the ids.
        self.on_change: Callable[[], None] = lambda: None

    def configure(self, roots: list[Path], settings: Settings) -> None:
        self.roots, self.settings = roots, settings
        if self._scan is not None:
            self._scan.cancel()  # it walks what no longer is the workspace
            self._scan = None
        self._next_scan = 0.0

    def files_changed(self) -> None:
        """The client saw files change on disk: read them again at the next look-up."""
        self._next_scan = 0.0

    def set_open(self, path: str, workflow_id: str | None, is_open: bool = True) -> None:
        """Record an open document's id (its parsed value's; ``is_open=False`` when it closes)."""
        new = workflow_id if is_open else None
        old = self._open.get(path, self._disk.get(path, (None, None))[1])
        if not is_open:
            self._open.pop(path, None)
        else:
            self._open[path] = new
        if new != old:
            self.generation += 1

    def refresh(self) -> None:
        """Start a scan of the disk if one is due; never waits for it (``on_change`` tells)."""
        dirs = tuple(self.settings.workflow_dirs())  # the configuration's look-up is cached by stat
        if dirs != self._scanned_dirs:
            # The project configuration now names other workflow folders (a client that watches
            # no files tells nobody): what was scanned, or is being scanned, is not this
            # workspace any more, whatever the time between scans says.
            if self._scan is not None:
                self._scan.cancel()
                self._scan = None
            self._next_scan = 0.0
        if self._scan is not None or time.monotonic() < self._next_scan:
            return
        self._scanned_dirs = dirs
        scan = self._scan = _Scan(self.roots, self.settings, {**self._elsewhere, **self._disk})
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no server loop (a command-line caller): scan here and now
            scan.run()
            self._finish(scan)
            return

        def on_thread() -> None:
            try:
                scan.run()
            finally:
                loop.call_soon_threadsafe(self._finish, scan)

        thread = threading.Thread(target=on_thread, name="workrail-workspace-scan", daemon=True)
        loop.call_later(_SCAN_START_DELAY, thread.start)

    def scanning(self) -> bool:
        return self._scan is not None

    def _finish(self, scan: _Scan) -> None:
        if scan is not self._scan:
            return  # cancelled by a new configuration: its findings are not this workspace's
        self._scan = None
        self._next_scan = time.monotonic() + max(_RESCAN_SECONDS, _RESCAN_FACTOR * scan.seconds)
        before = (self._scanned, self._complete, _ids(self._disk), _ids(self._elsewhere))
        self._disk, self._elsewhere, self._scanned = scan.found, scan.elsewhere, True
        self._complete = scan.complete
        if before != (True, self._complete, _ids(self._disk), _ids(self._elsewhere)):
            self.generation += 1
            self.on_change()

    def ids(self) -> dict[str, str | None]:
        """The ids known now: the last scan's, with open documents' over them."""
        self.refresh()
        merged = {path: wid for path, (_, wid) in self._disk.items()}
        merged.update(self._open)
        return merged

    def known_ids(self) -> set[str] | None:
        """Every workflow id a delegation or a routine template may name: the workspace's (open
        documents included) and the catalog's other sources'; None until a scan has read them all
        (one stopped by its time or file bound leaves ids it did not reach unknown, not missing:
        WR703/WR709 are not reported from it)."""
        if not (self._scanned and self._complete):
            self.refresh()
            return None
        ids = {*self.ids().values(), *(w for _, w in self._elsewhere.values())}
        return {i for i in ids if i is not None}

    def workflow_paths(self) -> dict[str, str | None]:
        """path → id of every workflow file a reference may lead to: the catalog's other sources'
        (a workflow repository's cached, read-only files among them), then the workspace's, so
        that a lookup by id that keeps the last path finds the workspace's first, as the catalog
        serves it."""
        return {**_ids(self._elsewhere), **self.ids()}

    async def settled_paths(self) -> dict[str, str | None]:
        """`workflow_paths` once a due scan has ended, for a feature that looks ids up (a link to
        a routine's file, go-to-definition) rather than reports on them: it is asked once, not
        again when a scan ends. Bounded by the scan's own bounds."""
        self.refresh()
        while self._scan is not None:
            await asyncio.sleep(0.02)
        return self.workflow_paths()

    def others_with_id(self, path: str, workflow_id: str) -> list[str]:
        # Files under examples/ are not served (the catalog skips them, as upstream does), so an
        # example sharing a served workflow's id clashes with nothing.
        if not _served(path):
            return []
        return sorted(
            p
            for p, wid in self.ids().items()
            if wid == workflow_id and _served(p) and not _same_file(p, path)
        )


def _ids(entries: dict[str, _Entry]) -> dict[str, str | None]:
    return {path: workflow_id for path, (_, workflow_id) in entries.items()}


def _read_id(path: str, settings: Settings | None) -> str | None:
    """``settings``: those that decide whether the file is a workflow (None: it is)."""
    try:  # regular files only, bounded in size and time: a FIFO named x.json is not read
        text = bounded_read(functools.partial(read_regular_file, path)).decode("utf-8")
    except (UnreadableFile, ReadTimedOut, UnicodeDecodeError):
        return None
    if settings is not None and not settings.is_workflow(path, text):
        return None
    return workflow_id_of(text, path)


def catalog_directories(roots: list[Path]) -> list[Path]:
    """The catalog's sources that are not the project's: bundled, the user's, the environment's,
    and the workflow repositories each root's project declares (from the cache: no network)."""
    from workrail_engine.catalog import machine_sources, repository_sources

    found = [source.directory for source in machine_sources()]
    for root in roots:
        found += [source.directory for source in repository_sources(root)]
    return list(dict.fromkeys(found))


def candidate_files(
    roots: list[Path], settings: Settings, stop: Callable[[], bool] = lambda: False
) -> list[str]:
    """JSON and YAML files under the roots and the workflow folders of the settings and of the
    project configuration (vendored folders skipped), at most ``MAX_SCAN_FILES``; ``stop()`` is
    asked at each folder and ends the walk."""
    found: list[str] = []
    for root in [*roots, *(Path(d) for d in settings.workflow_dirs())]:
        for folder, dirs, files in os.walk(root):
            if stop():
                return found
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
            found.extend(
                os.path.join(folder, f) for f in files if f.endswith((".json", ".yaml", ".yml"))
            )
            if len(found) > MAX_SCAN_FILES:
                log.warning(
                    "more than %d JSON/YAML files under %s (MAX_SCAN_FILES); the rest are not checked",
                    MAX_SCAN_FILES,
                    root,
                )
                return found[:MAX_SCAN_FILES]
    return found


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _served(path: str, skipped: frozenset[str] | None = None) -> bool:
    if skipped is None:
        from workrail_engine.catalog import SKIPPED_FOLDERS as skipped
    return not skipped.intersection(Path(path).parts[:-1])
