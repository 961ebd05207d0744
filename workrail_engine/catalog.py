"""Where workflows come from: layered sources, shadowing, invalid files, and change detection.

Sources, lowest precedence first: bundled → user directory → ``WORKRAIL_WORKFLOW_PATH`` →
workflow repositories (``workflow-repos``: the user's, the environment's, the project's; read
from their cache, see `workrail_engine.sources`) → the project's ``./workflows`` and
``./.workrail/workflows`` → directories named explicitly. A later
source's workflow with the same id wins and the shadowing is reported. Invalid files are left out
and reported with their diagnostics; they never break the others: asking for one by id raises
``InvalidWorkflow`` with them, and ``report_invalid`` hears of each when it is first read and
whenever it changes.

Each source directory is searched recursively (upstream WorkRail keeps ``routines/`` inside
``workflows/``), skipping hidden directories and ``examples/`` folders, which upstream does not
serve either.

Change detection is by polling: at most every ``rescan_interval`` seconds a look-up lists the
directories and stats the files; a file is re-read only when its size or modification time changed.
This needs no watcher thread, works on every file system, and keeps a warm ``entries()`` on a
10,000-file catalog to a dictionary read between scans.

A workflow repository is served from the folder of one commit's tree, so a branch that moved is
another folder, not a changed file: the servers' background refresh
(`workrail_engine.sources.refresh`) calls ``reload_repositories``, which serves each repository
at its commit now and rescans.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .compile import CompiledWorkflow, compile_workflow
from .compile.bindings import project_bindings
from .diagnostics import Diagnostic, Severity
from .errors import InvalidWorkflow, WorkflowNotFound
from .home import workrail_home
from .lint import WORKFLOW_SUFFIXES, lint_path

__all__ = [
    "Catalog",
    "CatalogProtocol",
    "InvalidFile",
    "Shadowing",
    "Source",
    "SourceCount",
    "WorkflowEntry",
    "bundled_directory",
    "default_sources",
    "machine_sources",
    "repository_sources",
    "source_counts",
    "user_directory",
]

SOURCE_KINDS = ("bundled", "user", "env", "repo", "project", "extra")


@dataclass(frozen=True)
class Source:
    kind: str
    directory: Path
    name: str = ""
    """A workflow repository's name (``kind == "repo"``); empty for a folder."""

    @property
    def label(self) -> str:
        """How a listing names the source: its kind, and a repository's name."""
        return f"repo:{self.name}" if self.name else self.kind


@dataclass(frozen=True)
class WorkflowEntry:
    id: str
    path: Path
    source: Source
    definition: dict[str, Any]
    diagnostics: tuple[Diagnostic, ...] = ()  # warnings only: an entry has no errors

    def summary(self) -> dict[str, str]:
        d = self.definition
        return {
            "id": self.id,
            "name": str(d.get("name", self.id)),
            "description": str(d.get("description", "")),
            "category": str(d.get("category", "")),
            "version": str(d.get("version", "")),
        }


@dataclass(frozen=True)
class InvalidFile:
    path: Path
    source: Source
    diagnostics: tuple[Diagnostic, ...]
    workflow_id: str | None = None  # its id, else its file name: a look-up by id can explain

    def error(self) -> InvalidWorkflow:
        """What asking for this file's workflow by id answers."""
        errors = [d for d in self.diagnostics if d.is_error] or list(self.diagnostics)
        first = errors[0] if errors else None
        detail = f"; first: {first.code} {first.message} at {first.pointer or '/'}" if first else ""
        return InvalidWorkflow(
            f"Workflow {self.workflow_id!r} ({self.path}) is invalid: {len(errors)} error(s){detail}",
            workflowId=self.workflow_id,
            path=str(self.path),
            diagnostics=[d.to_dict() for d in self.diagnostics],
        )


@dataclass(frozen=True)
class Shadowing:
    workflow_id: str
    winner: Path
    hidden: tuple[Path, ...]


@dataclass(frozen=True)
class SourceCount:
    """What one source holds: the workflows served from it, and the ids it holds that a later
    source serves instead."""

    source: Source
    served: int
    shadowed: tuple[str, ...]


def source_counts(catalog: CatalogProtocol) -> list[SourceCount]:
    """Each source of ``catalog``, in precedence order, with its counts."""
    served = Counter(entry.source for entry in catalog.entries())
    shadowings = catalog.shadowed()
    return [
        SourceCount(
            source,
            served[source],
            tuple(
                sorted(
                    {
                        s.workflow_id
                        for s in shadowings
                        if any(p.is_relative_to(source.directory) for p in s.hidden)
                    }
                )
            ),
        )
        for source in catalog.sources
    ]


def bundled_directory() -> Path:
    """Workflows shipped in the wheel; in a source checkout, the repository's ``workflows/``."""
    package = Path(__file__).resolve().parent
    installed = package / "bundled_workflows"
    return installed if installed.is_dir() else package.parent / "workflows"


def user_directory() -> Path:
    return workrail_home() / "workflows"


def _project_sources(project_dir: Path) -> list[Source]:
    return [
        Source("project", project_dir / "workflows"),
        Source("project", project_dir / ".workrail" / "workflows"),
    ]


def repository_sources(project_dir: Path, warnings: list[str] | None = None) -> list[Source]:
    """The workflow repositories ``project_dir`` uses, as served from the cache now (never a
    network call); what cannot be served is added to ``warnings``."""
    from .sources.served import served_repositories

    served, problems = served_repositories(project_dir)
    if warnings is not None:
        warnings += problems + [s.warning for s in served if s.warning]
    return [Source("repo", s.directory, s.source.name) for s in served if s.directory is not None]


def machine_sources() -> list[Source]:
    """The sources no project decides: bundled, the user's, ``WORKRAIL_WORKFLOW_PATH``'s."""
    sources = [Source("bundled", bundled_directory()), Source("user", user_directory())]
    for entry in os.environ.get("WORKRAIL_WORKFLOW_PATH", "").split(os.pathsep):
        if entry.strip():
            sources.append(Source("env", Path(entry).expanduser()))
    return sources


def default_sources(
    project_dir: Path | None = None,
    extra_dirs: Sequence[Path] = (),
    warnings: list[str] | None = None,
) -> list[Source]:
    """The catalog's sources, lowest precedence first; ``warnings`` hears of the workflow
    repositories that cannot be served."""
    sources = machine_sources()
    project = Path(project_dir) if project_dir is not None else Path.cwd()
    sources += repository_sources(project, warnings)
    sources += _project_sources(project)
    sources += [Source("extra", Path(d).expanduser()) for d in extra_dirs]
    return sources


class CatalogProtocol(Protocol):
    """What the front ends and the run service ask of a catalog (`Catalog` is the one that reads
    directories): look-ups by id, the listing, the files left out, and the project it serves."""

    rescan_interval: float
    generation: int  # bumped when a rescan found a change: views built on it are stale after

    @property
    def sources(self) -> list[Source]: ...
    def refresh(self, force: bool = False) -> None: ...
    def entries(self) -> list[WorkflowEntry]: ...
    def ids(self) -> list[str]: ...
    def get(self, workflow_id: str) -> WorkflowEntry: ...
    def served(self, workflow_id: str) -> dict[str, Any]: ...
    def serve_file(self, definition: dict[str, Any]) -> dict[str, Any]: ...
    def routine(self, name: str) -> dict[str, Any] | None: ...
    def invalid_files(self) -> list[InvalidFile]: ...
    def shadowed(self) -> list[Shadowing]: ...
    def writable_directory(self, where: str = "project") -> Path: ...
    def set_project_dirs(self, dirs: Sequence[Path]) -> None: ...


@dataclass(frozen=True)
class _Loaded:
    stamp: tuple[int, int]
    entry: WorkflowEntry | None
    invalid: InvalidFile | None

    @property
    def source(self) -> Source | None:
        held = self.entry or self.invalid
        return held.source if held is not None else None


class Catalog:
    """The workflows visible from a project, kept current without a restart."""

    rescan_interval: float  # seconds between looks at the directories (front ends say it)

    def __init__(
        self,
        sources: Sequence[Source],
        *,
        rescan_interval: float = 0.5,
        background: bool = False,
        report_invalid: Callable[[InvalidFile], None] | None = None,
    ) -> None:
        """``background``: after the first scan, due rescans run on a thread and look-ups answer
        from the current snapshot at once (for servers, where a request must not wait for a
        10,000-file scan); otherwise the look-up that finds a rescan due performs it.
        ``report_invalid`` is called for each invalid file read (at the first scan, and again
        when the file changes)."""
        self._report_invalid = report_invalid
        self._sources = list(sources)
        self._rescan_interval = self.rescan_interval = rescan_interval
        self._background = background
        self._scanning = threading.Event()
        self._lock = threading.RLock()
        self._files: dict[str, _Loaded] = {}
        self._entries: dict[str, WorkflowEntry] = {}
        self._shadowed: list[Shadowing] = []
        self._invalid: list[InvalidFile] = []
        self._scanned_at = float("-inf")
        self._signature: tuple[Any, ...] = ()
        self._compiled: dict[str, CompiledWorkflow] = {}
        self.generation = 0
        self.source_warnings: list[str] = []
        """Workflow repositories that cannot be served (never fetched, a bad lock…)."""
        self._project_dirs: list[Path] = []  # whose workflow repositories are served

    @classmethod
    def default(
        cls, project_dir: Path | None = None, extra_dirs: Sequence[Path] = (), **options: Any
    ) -> Catalog:
        warnings: list[str] = []
        catalog = cls(default_sources(project_dir, extra_dirs, warnings), **options)
        catalog.source_warnings = warnings
        catalog._project_dirs = [Path(project_dir) if project_dir is not None else Path.cwd()]
        return catalog

    @property
    def sources(self) -> list[Source]:
        return list(self._sources)

    def set_project_dirs(self, dirs: Sequence[Path]) -> None:
        """Replace the project sources (e.g. with an MCP client's roots), and the workflow
        repositories those projects declare, and rescan now."""
        warnings: list[str] = []
        repositories = list(
            dict.fromkeys(s for d in dirs for s in repository_sources(Path(d), warnings))
        )
        with self._lock:
            self._project_dirs = [Path(d) for d in dirs]
            kept = [s for s in self._sources if s.kind not in ("project", "repo")]
            project = repositories + [s for d in dirs for s in _project_sources(Path(d))]
            self.source_warnings = list(dict.fromkeys(warnings))
            at = next((i for i, s in enumerate(kept) if s.kind == "extra"), len(kept))
            self._sources = kept[:at] + project + kept[at:]
            self._scan()  # at once: the caller expects the new projects' workflows now
            self._scanned_at = time.monotonic()

    @property
    def project_dirs(self) -> list[Path]:
        """The projects whose workflow repositories are served (`default`'s, or the last
        `set_project_dirs`')."""
        return list(self._project_dirs)

    def reload_repositories(self) -> None:
        """Serve each workflow repository at its commit now (a background sync moved a followed
        branch: the new commit's tree is another folder), and rescan."""
        with self._lock:
            if self._project_dirs:
                self.set_project_dirs(self._project_dirs)

    def refresh(self, force: bool = False) -> None:
        if not force and time.monotonic() - self._scanned_at < self._rescan_interval:
            return
        if self._background and not force and self._scanned_at != float("-inf"):
            if not self._scanning.is_set():
                self._scanning.set()
                threading.Thread(
                    target=self._scan_in_background, name="workrail-catalog-scan", daemon=True
                ).start()
            return
        self._scan_now()

    def _scan_now(self) -> None:
        with self._lock:
            self._scan()
            self._scanned_at = time.monotonic()

    def _scan_in_background(self) -> None:
        try:
            self._scan_now()
        finally:
            self._scanning.clear()

    def entries(self) -> list[WorkflowEntry]:
        self.refresh()
        return sorted(self._entries.values(), key=lambda e: e.id)

    def ids(self) -> list[str]:
        self.refresh()
        return sorted(self._entries)

    def get(self, workflow_id: str) -> WorkflowEntry:
        self.refresh()
        entry = self._entries.get(workflow_id)
        if entry is None:
            for invalid in self._invalid:
                if invalid.workflow_id == workflow_id:
                    raise invalid.error()
            raise WorkflowNotFound(workflow_id, self._entries)
        return entry

    def compiled(self, workflow_id: str) -> CompiledWorkflow:
        """The served form of a workflow (templates, bindings, features, refs, prompt blocks),
        compiled on first use and kept until the catalog changes (a routine may change with it)."""
        entry = self.get(workflow_id)
        with self._lock:
            found = self._compiled.get(workflow_id)
            if found is None:
                overrides = project_bindings(self._project_dir(), workflow_id)
                found = compile_workflow(entry.definition, self.routine, overrides)
                self._compiled[workflow_id] = found
        return found

    def served(self, workflow_id: str) -> dict[str, Any]:
        """The compiled definition; InvalidWorkflow with the problems when it does not compile."""
        compiled = self.compiled(workflow_id)
        _raise_problems(workflow_id, compiled)
        return compiled.definition

    def serve_file(self, definition: dict[str, Any]) -> dict[str, Any]:
        """A workflow read from a file outside the catalog, compiled against the catalog's routines."""
        workflow_id = str(definition.get("id", ""))
        compiled = compile_workflow(
            definition, self.routine, project_bindings(self._project_dir(), workflow_id)
        )
        _raise_problems(workflow_id, compiled)
        return compiled.definition

    def routine(self, name: str) -> dict[str, Any] | None:
        """The definition of the workflow ``name`` as a routine to inject; None when absent
        (looked up in the catalog as last scanned, as the compile step does)."""
        entry = self._entries.get(name)
        return entry.definition if entry is not None else None

    def _project_dir(self) -> Path | None:
        for source in self._sources:
            if source.kind == "project":
                return source.directory.parent
        return None

    def invalid_files(self) -> list[InvalidFile]:
        self.refresh()
        return list(self._invalid)

    def shadowed(self) -> list[Shadowing]:
        self.refresh()
        return list(self._shadowed)

    def writable_directory(self, where: str = "project") -> Path:
        """The directory new workflows are written to: the first project source, or the user's."""
        if where == "user":
            return user_directory()
        for source in self._sources:
            if source.kind == "project":
                return source.directory
        return user_directory()

    # -- scanning -------------------------------------------------------------------------

    def _unique_sources(self) -> list[Source]:
        seen: set[Path] = set()
        unique = []
        for source in self._sources:
            try:
                key = source.directory.resolve()
            except OSError:
                key = source.directory
            if key not in seen:
                seen.add(key)
                unique.append(source)
        return unique

    def _scan(self) -> None:
        # Paths stay strings here: building 10,000 pathlib.Path objects per scan cost ~0.5 s.
        listed: list[tuple[Source, str, tuple[int, int]]] = []
        for source in self._unique_sources():
            listed.extend(_list_directory(source))
        signature = tuple((path, stamp) for _, path, stamp in listed)
        if signature == self._signature:
            return
        self._signature = signature
        files: dict[str, _Loaded] = {}
        fresh_invalid = []
        for source, path, stamp in listed:
            cached = self._files.get(path)
            if cached is None or cached.stamp != stamp or cached.source != source:
                cached = _load(source, Path(path), stamp)
                if cached.invalid is not None:
                    fresh_invalid.append(cached.invalid)
            files[path] = cached
        self._files = files
        self._build(listed)
        self.generation += 1
        if self._report_invalid is not None:
            for invalid in fresh_invalid:
                self._report_invalid(invalid)

    def _build(self, listed: list[tuple[Source, str, tuple[int, int]]]) -> None:
        entries: dict[str, WorkflowEntry] = {}
        hidden: dict[str, list[Path]] = {}
        invalid = []
        for _, path, _ in listed:
            loaded = self._files[path]
            if loaded.invalid is not None:
                invalid.append(loaded.invalid)
                continue
            entry = loaded.entry
            assert entry is not None
            if entry.id in entries:
                hidden.setdefault(entry.id, []).append(entries[entry.id].path)
            entries[entry.id] = entry
        self._entries = entries
        self._compiled = {}
        self._invalid = invalid
        self._shadowed = [
            Shadowing(i, entries[i].path, tuple(paths)) for i, paths in sorted(hidden.items())
        ]


# Folders of a source that hold no served workflows: upstream keeps examples there.
SKIPPED_FOLDERS = frozenset({"examples"})


def _raise_problems(workflow_id: str, compiled: CompiledWorkflow) -> None:
    if compiled.problems:
        first = compiled.problems[0]
        raise InvalidWorkflow(
            f"Workflow {workflow_id!r} does not compile: {first.code} {first.message} at {first.pointer}",
            workflowId=workflow_id,
            problems=[problem.to_dict() for problem in compiled.problems],
        )


def _list_directory(source: Source) -> list[tuple[Source, str, tuple[int, int]]]:
    found: list[tuple[Source, str, tuple[int, int]]] = []
    _list_into(source, os.fspath(source.directory), found)
    return found


def _list_into(
    source: Source, directory: str, found: list[tuple[Source, str, tuple[int, int]]]
) -> None:
    """Files of ``directory`` sorted by name, then each subfolder's, recursively.

    Symbolic links to directories are not followed: a link back up the tree would never end.
    """
    subfolders = []
    files = []
    try:
        with os.scandir(directory) as it:
            for item in it:
                if item.name.startswith("."):
                    continue
                try:
                    if item.is_dir(follow_symlinks=False):
                        if item.name not in SKIPPED_FOLDERS:
                            subfolders.append(item.path)
                        continue
                    if not item.name.lower().endswith(WORKFLOW_SUFFIXES) or not item.is_file():
                        continue
                    stat = item.stat()
                except OSError:
                    continue
                files.append((source, item.path, (stat.st_mtime_ns, stat.st_size)))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    files.sort(key=lambda row: row[1])  # one directory: sorting the paths sorts the names
    found.extend(files)
    for folder in sorted(subfolders):
        _list_into(source, folder, found)


def _load(source: Source, path: Path, stamp: tuple[int, int]) -> _Loaded:
    result = lint_path(path)
    errors = tuple(d for d in result.diagnostics if d.severity is Severity.ERROR)
    value = result.document.value
    if errors or not isinstance(value, dict) or not isinstance(value.get("id"), str):
        diagnostics = errors or tuple(result.diagnostics)
        workflow_id = value.get("id") if isinstance(value, dict) else None
        # A file whose id cannot be read (it does not parse, or names none) is asked for by its
        # file name: the answer should be its diagnostics, not "not found".
        named = workflow_id if isinstance(workflow_id, str) else path.name.split(".")[0]
        return _Loaded(stamp, None, InvalidFile(path, source, diagnostics, named))
    warnings = tuple(result.diagnostics)
    return _Loaded(stamp, WorkflowEntry(value["id"], path, source, value, warnings), None)
