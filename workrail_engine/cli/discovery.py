"""Which files `workrail validate` checks: explicit files, directories walked, globs expanded.

A path that does not exist (or a glob that matches nothing) is a usage error, reported before
anything is checked. Directories are walked for ``*.json``/``*.yaml``/``*.yml`` files, skipping
hidden directories other than ``.workrail`` and the usual vendored trees, so
``workrail validate .`` does not wander into ``.git`` or ``node_modules``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

__all__ = ["PROJECT_SUBDIRS", "MissingPath", "collect_files", "project_directories"]

SUFFIXES = (".json", ".yaml", ".yml")
PROJECT_SUBDIRS = ("workflows", os.path.join(".workrail", "workflows"))
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})
GLOB_CHARS = frozenset("*?[")


class MissingPath(Exception):
    """A path argument names nothing on disk."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path


def project_directories(project: Path, extra: Sequence[Path] = ()) -> list[Path]:
    """The project's workflow directories that exist, then any ``--workflows`` directories."""
    found = [project / sub for sub in PROJECT_SUBDIRS if (project / sub).is_dir()]
    return found + [Path(d) for d in extra if Path(d).is_dir()]


def _walk(directory: str) -> Iterator[str]:
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if _descend(d))
        for name in sorted(files):
            if name.lower().endswith(SUFFIXES):
                yield os.path.join(root, name)


def _descend(name: str) -> bool:
    if name in SKIPPED_DIRS:
        return False
    return not name.startswith(".") or name == ".workrail"


def _expand(argument: str) -> list[str]:
    if os.path.lexists(argument):
        return [argument]
    if GLOB_CHARS.intersection(argument):
        matches = sorted(glob.glob(argument, recursive=True))
        if matches:
            return matches
        raise MissingPath(argument, "no file matches this pattern")
    raise MissingPath(argument, "no such file or directory")


def collect_files(arguments: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Every file to check, in the order given, each once (as the user spelled its path)."""
    seen: set[str] = set()
    out: list[str] = []
    for argument in arguments:
        for match in _expand(os.fspath(argument)):
            paths = _walk(match) if os.path.isdir(match) else [match]
            for path in paths:
                key = os.path.realpath(path)
                if key not in seen:
                    seen.add(key)
                    out.append(path)
    return out
