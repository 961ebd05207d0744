"""The workflow ids of every workflow file in the workspace, for duplicate-id diagnostics.

Files on disk are read once per (size, mtime); an open document's text replaces its file's.
Ids are read with ``json.loads`` (a few ms per MB) rather than a full lint: only ``id`` matters.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from pathlib import Path

from workrail_engine.document import parse_document
from workrail_engine.regular_files import UnreadableFile, read_regular_file

from .configuration import Settings
from .disk_files import ReadTimedOut, bounded_read

__all__ = ["WorkspaceIndex", "candidate_files", "workflow_id_of"]

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
_MAX_FILES = 5000
_RESCAN_SECONDS = 2.0


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


class WorkspaceIndex:
    def __init__(self) -> None:
        self.roots: list[Path] = []
        self.settings = Settings()
        self._disk: dict[str, tuple[tuple[int, float], str | None]] = {}
        self._open: dict[str, str | None] = {}
        self._scanned_at = 0.0
        self.generation = 0

    def configure(self, roots: list[Path], settings: Settings) -> None:
        self.roots, self.settings = roots, settings
        self._scanned_at = 0.0

    def files_changed(self) -> None:
        """The client saw files change on disk: read them again at the next look-up."""
        self._scanned_at = 0.0

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
        """Re-read the disk if the last scan is old enough (bumps ``generation`` on change)."""
        self._rescan_if_due()

    def ids(self) -> dict[str, str | None]:
        self._rescan_if_due()
        merged = {path: wid for path, (_, wid) in self._disk.items()}
        merged.update(self._open)
        return merged

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

    def _rescan_if_due(self) -> None:
        now = time.monotonic()
        if now - self._scanned_at < _RESCAN_SECONDS:
            return
        self._scanned_at = now
        seen: dict[str, tuple[tuple[int, float], str | None]] = {}
        for path in self._candidate_files():
            try:
                stat = os.stat(path)
            except OSError:
                continue
            key = (stat.st_size, stat.st_mtime)
            known = self._disk.get(path)
            if known is not None and known[0] == key:
                seen[path] = known
                continue
            seen[path] = (key, self._read_id(path))
        if {p: w for p, (_, w) in seen.items()} != {p: w for p, (_, w) in self._disk.items()}:
            self.generation += 1
        self._disk = seen

    def _read_id(self, path: str) -> str | None:
        try:  # regular files only, bounded in size and time: a FIFO named x.json is not read
            text = bounded_read(functools.partial(read_regular_file, path)).decode("utf-8")
        except (UnreadableFile, ReadTimedOut, UnicodeDecodeError):
            return None
        return workflow_id_of(text, path) if self.settings.is_workflow(path, text) else None

    def _candidate_files(self) -> list[str]:
        return candidate_files(self.roots, self.settings)


def candidate_files(roots: list[Path], settings: Settings) -> list[str]:
    """JSON and YAML files under the roots and the extra workflow folders (vendored folders skipped)."""
    found: list[str] = []
    for root in [*roots, *(Path(d) for d in settings.extra_workflow_dirs)]:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
            found.extend(
                os.path.join(folder, f) for f in files if f.endswith((".json", ".yaml", ".yml"))
            )
            if len(found) > _MAX_FILES:
                log.warning(
                    "more than %d JSON/YAML files under %s; the rest are not checked",
                    _MAX_FILES,
                    root,
                )
                return found
    return found


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _served(path: str) -> bool:
    from workrail_engine.catalog import SKIPPED_FOLDERS

    return not SKIPPED_FOLDERS.intersection(Path(path).parts[:-1])
