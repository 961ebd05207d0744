"""Which files `workrail validate` checks: explicit files, directories walked, globs expanded.

A path that does not exist (or a glob that matches nothing) is a usage error, reported before
anything is checked. Files named on the command line are always checked. Directories are walked
for the files that are workflows by the engine's one rule (:mod:`workrail_engine.text.workflow_files`:
under a ``workflows/`` directory, ``*.workflow.json|yaml|yml``, or a ``$schema`` naming ours), so
``workrail validate .`` in a repository skips its ``package.json``; a directory that is a
``workflows`` directory (or lies in one, as spelled relative to here) has all its JSON/YAML files
checked. The walk skips hidden directories
other than ``.workrail`` and the usual vendored trees (``.git``, ``.venv``, ``node_modules``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from workrail_engine.cli.formatters.codeframe import printable_path
from workrail_engine.text.workflow_files import (
    SUFFIXES,
    is_workflow_name,
    is_workflows_directory,
    lies_in_workflows_directory,
    names_workrail_schema,
    read_head,
)

__all__ = [
    "PROJECT_SUBDIRS",
    "MissingPath",
    "collect_files",
    "named_paths",
    "project_directories",
]

PROJECT_SUBDIRS = ("workflows", os.path.join(".workrail", "workflows"))
SKIPPED_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "site-packages"}
)  # and hidden ones
GLOB_CHARS = frozenset("*?[")


class MissingPath(Exception):
    """A path argument names nothing on disk."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{printable_path(path)}: {reason}")
        self.path = path


def project_directories(project: Path, extra: Sequence[Path] = ()) -> list[Path]:
    """The project's workflow directories that exist, then any ``--workflows`` directories."""
    found = [project / sub for sub in PROJECT_SUBDIRS if (project / sub).is_dir()]
    return found + [Path(d) for d in extra if Path(d).is_dir()]


def _walk(directory: str, every_file: bool) -> Iterator[str]:
    every_file = every_file or _in_workflows_directory(directory)
    absolute = os.path.isabs(directory)
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if _descend(d))
        # The path rule reads the path as the user spelled it (`workflows/sub/a.json` counts);
        # below an absolute directory only the part under it does, so a checkout that happens to
        # live in some ~/workflows/ folder does not make every JSON file in it a workflow. Asked
        # once per directory: per file, it was half of the walk's instructions.
        spelled = os.path.relpath(root, directory) if absolute else root
        in_workflows = lies_in_workflows_directory(spelled)
        for name in sorted(files):
            if name.lower().endswith(SUFFIXES):
                path = os.path.join(root, name)
                if (
                    every_file
                    or is_workflow_name(name, in_workflows)
                    or names_workrail_schema(read_head(path))
                ):
                    yield path


def _in_workflows_directory(directory: str) -> bool:
    # `workrail validate workflows/`, or `.` inside a workflows directory.
    return is_workflows_directory(os.path.normpath(directory)) or is_workflows_directory(
        Path(directory).resolve()
    )


def _descend(name: str) -> bool:
    if name in SKIPPED_DIRS:
        return False
    return not name.startswith(".") or name == ".workrail"


def _expand(argument: str) -> list[str]:
    if os.path.lexists(argument):
        return [argument]
    if GLOB_CHARS.intersection(argument):
        import glob  # only for a pattern: its import compiles regexes (~1.5 ms of every start)

        matches = sorted(glob.glob(argument, recursive=True))
        if matches:
            return matches
        raise MissingPath(argument, "no file matches this pattern")
    raise MissingPath(argument, "no such file or directory")


def named_paths(arguments: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The paths the arguments name, each glob pattern expanded."""
    return [match for argument in arguments for match in _expand(os.fspath(argument))]


def collect_files(
    arguments: Iterable[str | os.PathLike[str]], *, sources: bool = False
) -> list[str]:
    """Every file to check, in the order given, each once (as the user spelled its path).

    ``sources``: the directories are workflow sources (the project's, ``--workflows``), so every
    JSON/YAML file in them counts, whatever the directory's name.
    """
    seen: set[str] = set()
    out: list[str] = []
    resolved_directories: dict[str, str] = {}
    for argument in arguments:
        for match in _expand(os.fspath(argument)):
            paths = _walk(match, sources) if os.path.isdir(match) else [match]
            for path in paths:
                key = _real_path(path, resolved_directories)
                if key not in seen:
                    seen.add(key)
                    out.append(path)
    return out


def _real_path(path: str, resolved_directories: dict[str, str]) -> str:
    """``os.path.realpath(path)``, resolving each directory once: a name that is no symbolic
    link resolves to its resolved directory joined with the name (realpath's lstat of every
    component of every one of 1,000 files was most of the walk's time)."""
    directory, name = os.path.split(path)
    if name in ("", ".", "..") or os.path.islink(path):
        return os.path.realpath(path)
    if directory not in resolved_directories:
        resolved_directories[directory] = os.path.realpath(directory or ".")
    return os.path.join(resolved_directories[directory], name)
