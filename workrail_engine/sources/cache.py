"""The clones of workflow repositories, under the one home: ``~/.workrail/sources/<name>/``.

Each repository URL has a folder (`urls.cache_name`) shared by the CLI, the language server and
the MCP server::

    mirror.git/          a bare clone (cloned into a temporary folder, then renamed)
    trees/<commit>/      the workflow files of one commit, read-only, written whole then renamed
    state.json           per rev: the commit it resolved to and when it was last synced

A tree holds only what the catalog reads: regular files named like workflows (``.json``,
``.yaml``, ``.yml``) of at most ``MAX_DOCUMENT_BYTES`` each, at most ``MAX_SOURCE_FILES`` files and
``MAX_SOURCE_BYTES`` in all. They are read from Git's objects (``ls-tree`` and ``cat-file``), never
checked out: no attribute, filter, hook or submodule of the repository has a say. A symbolic link
is followed only to a workflow file of the same commit; one pointing out of the repository (say
``/etc/passwd``) is left out and noted. Nothing here reaches the network but `sync`.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..home import workrail_home
from ..limits import MAX_DOCUMENT_BYTES
from ..text.workflow_files import SUFFIXES as WORKFLOW_SUFFIXES
from .declared import COMMIT_ID, RepoSource
from .git import Git, GitError, GitMissing
from .urls import cache_name

__all__ = [
    "MAX_SOURCE_BYTES",
    "MAX_SOURCE_FILES",
    "CachedRepository",
    "SyncOutcome",
    "sources_root",
    "sync",
]

MAX_SOURCE_FILES = 10_000
"""The most workflow files one commit of a repository contributes (the rest are left out)."""
MAX_SOURCE_BYTES = 256 * 1024 * 1024
"""The most bytes of workflow files one commit contributes (the rest are left out)."""
MAX_LINK_TARGET_BYTES = 4096
MAX_STATE_BYTES = 1024 * 1024
NOTES_FILE = ".workrail-export.json"  # hidden: the catalog never reads it as a workflow


def sources_root() -> Path:
    return workrail_home() / "sources"


def _rev_key(rev: str | None) -> str:
    return rev or "HEAD"


@dataclass(frozen=True)
class CachedRepository:
    """The cache folder of one repository URL."""

    url: str

    @property
    def folder(self) -> Path:
        return sources_root() / cache_name(self.url)

    @property
    def mirror(self) -> Path:
        return self.folder / "mirror.git"

    def tree(self, commit: str) -> Path:
        return self.folder / "trees" / commit

    def state(self) -> dict[str, Any]:
        try:
            with open(self.folder / "state.json", "rb") as handle:
                loaded = json.loads(handle.read(MAX_STATE_BYTES))
        except (OSError, ValueError):
            return {}
        return loaded if isinstance(loaded, dict) else {}

    def synced(self, rev: str | None) -> dict[str, Any] | None:
        """``{commit, synced, followed}`` of ``rev``'s last sync; None when never synced."""
        found = self.state().get("revs", {}).get(_rev_key(rev))
        if isinstance(found, dict) and COMMIT_ID.match(str(found.get("commit", ""))):
            return found
        return None

    def notes(self, commit: str) -> list[str]:
        try:
            with open(self.tree(commit) / NOTES_FILE, "rb") as handle:
                loaded = json.loads(handle.read(MAX_STATE_BYTES))
        except (OSError, ValueError):
            return []
        return [str(n) for n in loaded] if isinstance(loaded, list) else []

    def _record(self, rev: str | None, commit: str, followed: bool) -> None:
        state = self.state()
        state["url"] = self.url
        revs = state.setdefault("revs", {})
        revs[_rev_key(rev)] = {"commit": commit, "synced": time.time(), "followed": followed}
        write_json_atomically(self.folder / "state.json", state)

    def has_commit(self, git: Git, commit: str) -> bool:
        try:
            git.run(["cat-file", "-e", f"{commit}^{{commit}}"], git_dir=str(self.mirror))
        except GitMissing:
            raise
        except GitError:
            return False
        return True

    def export(self, git: Git, commit: str) -> Path:
        """The tree of ``commit`` (read from the mirror only), written once."""
        target = self.tree(commit)
        if not target.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            _export(git, str(self.mirror), commit, target)
        return target


def write_json_atomically(path: Path, value: Any) -> None:
    """``value`` as JSON in ``path``, whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        temporary = ""
    finally:
        if temporary:
            os.unlink(temporary)


@contextlib.contextmanager
def _exclusive(folder: Path) -> Iterator[None]:
    """One sync of a repository at a time across processes (the CLI beside a server)."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory lock; renames keep each write whole anyway
        yield
        return
    with open(folder / ".lock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@dataclass
class SyncOutcome:
    source: RepoSource
    commit: str | None = None
    previous: str | None = None
    followed: bool = False
    warning: str | None = None
    """The remote could not be reached, and the cached commit is served."""
    error: str | None = None
    """Nothing could be fetched and nothing is cached: the source is not served."""
    notes: list[str] = field(default_factory=list)
    """Files of the commit left out (too large, links out of the repository, past a limit)."""

    @property
    def changed(self) -> bool:
        return self.commit is not None and self.commit != self.previous


Progress = Callable[[str], None]


def sync(
    source: RepoSource,
    *,
    commit: str | None = None,
    environ: dict[str, str] | None = None,
    progress: Progress | None = None,
) -> SyncOutcome:
    """Fetch ``source`` from its remote now and resolve its rev (or make sure the locked
    ``commit`` is at hand); the tree of the commit is written if it is new. An unreachable remote
    with a cached commit is a warning (that commit is served), without one an error."""
    say = progress or (lambda _: None)
    cache = CachedRepository(source.url)
    git = Git(source.url, environ)
    cache.folder.mkdir(parents=True, exist_ok=True)
    with _exclusive(cache.folder):
        last = cache.synced(source.rev)
        previous = commit or (last["commit"] if last else None)
        try:
            say(f"fetching {source.describe()}")
            _fetch(git, cache, source)
            if commit is not None:
                followed = bool(last and last.get("followed"))
                if not cache.has_commit(git, commit):
                    git.run(
                        ["fetch", "--quiet", "--", source.url, commit], git_dir=str(cache.mirror)
                    )
                resolved = commit
            else:
                resolved, followed = _resolve(git, cache, source)
            cache.export(git, resolved)
        except GitMissing:
            raise
        except GitError as error:
            if previous is not None and cache.tree(previous).is_dir():
                return SyncOutcome(
                    source,
                    previous,
                    previous,
                    warning=f"{source.describe()}: {error}; serving the cached commit {previous[:12]}",
                )
            return SyncOutcome(source, previous=previous, error=f"{source.describe()}: {error}")
        if commit is None:
            cache._record(source.rev, resolved, followed)
        return SyncOutcome(source, resolved, previous, followed, notes=cache.notes(resolved))


def _fetch(git: Git, cache: CachedRepository, source: RepoSource) -> None:
    if not cache.mirror.is_dir():
        temporary = tempfile.mkdtemp(prefix=".clone-", dir=cache.folder)
        try:
            git.run(
                [
                    "clone",
                    "--bare",
                    "--quiet",
                    "--no-recurse-submodules",
                    "--",
                    source.url,
                    temporary,
                ]
            )
            os.rename(temporary, cache.mirror)
        finally:
            shutil.rmtree(temporary, ignore_errors=True)
        return
    mirror = str(cache.mirror)
    git.run(
        ["fetch", "--quiet", "--prune", "--no-recurse-submodules", "--", source.url,
         "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
        git_dir=mirror,
    )  # fmt: skip
    if source.rev is None:  # the remote's default branch may have changed
        answer = git.run(["ls-remote", "--symref", "--", source.url, "HEAD"], git_dir=mirror)
        for line in answer.decode("utf-8", "replace").splitlines():
            if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
                branch = line[len("ref: ") : -len("\tHEAD")]
                git.run(["symbolic-ref", "HEAD", branch], git_dir=mirror)


def _resolve(git: Git, cache: CachedRepository, source: RepoSource) -> tuple[str, bool]:
    """(commit, followed): a commit id or a tag is pinned, a branch (or no rev) is followed."""
    mirror = str(cache.mirror)
    rev = source.rev
    if rev is not None and COMMIT_ID.match(rev):
        if not cache.has_commit(git, rev):
            try:
                git.run(["fetch", "--quiet", "--", source.url, rev], git_dir=mirror)
            except GitError:
                raise GitError(f"commit {rev} is not in {source.url}") from None
        return rev, False
    candidates = (
        [("HEAD", True)]
        if rev is None
        else [(f"refs/tags/{rev}", False), (f"refs/heads/{rev}", True)]
    )
    for ref, followed in candidates:
        try:
            out = git.run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], git_dir=mirror)
        except GitMissing:
            raise
        except GitError:
            continue
        return out.decode("ascii").strip(), followed
    raise GitError(f"no branch or tag {rev!r} in {source.url}")


def _safe_path(path: str) -> bool:
    parts = path.split("/")
    return all(p not in ("", ".", "..", ".git") and "\\" not in p for p in parts)


@dataclass
class _Listing:
    files: dict[str, tuple[str, int]] = field(default_factory=dict)  # path -> (object, size)
    links: dict[str, str] = field(default_factory=dict)  # path -> object of the link's target
    notes: list[str] = field(default_factory=list)


def _list(git: Git, mirror: str, commit: str) -> _Listing:
    listing = _Listing()
    total = 0
    raw = git.run(["ls-tree", "-r", "-l", "-z", "--full-tree", commit], git_dir=mirror)
    for item in raw.split(b"\0"):
        meta, _, name = item.partition(b"\t")
        fields = meta.split()
        if len(fields) != 4:
            continue
        mode, _, obj, size = fields
        try:
            path = name.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not path.lower().endswith(WORKFLOW_SUFFIXES) or not _safe_path(path):
            continue
        if mode == b"120000":
            listing.links[path] = obj.decode("ascii")
        elif mode in (b"100644", b"100755"):  # a submodule (160000) is never fetched
            length = int(size)
            if length > MAX_DOCUMENT_BYTES:
                listing.notes.append(
                    f"{path}: {length:,} bytes, more than a workflow file may hold "
                    f"({MAX_DOCUMENT_BYTES:,}, MAX_DOCUMENT_BYTES): left out"
                )
            elif len(listing.files) >= MAX_SOURCE_FILES or total + length > MAX_SOURCE_BYTES:
                listing.notes.append(
                    f"{path}: past the {MAX_SOURCE_FILES:,} files or {MAX_SOURCE_BYTES:,} bytes "
                    "one repository may add (MAX_SOURCE_FILES, MAX_SOURCE_BYTES): left out"
                )
            else:
                listing.files[path] = (obj.decode("ascii"), length)
                total += length
    return listing


class _Objects:
    """Blobs read through one ``git cat-file --batch``."""

    def __init__(self, git: Git, mirror: str) -> None:
        self._process = git.popen(["cat-file", "--batch"], git_dir=mirror)

    def read(self, obj: str, limit: int) -> bytes | None:
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(obj.encode("ascii") + b"\n")
        process.stdin.flush()
        header = process.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            return None
        size = int(header[2])
        data = process.stdout.read(size)
        process.stdout.read(1)  # the newline after each object
        return data if size <= limit else None

    def close(self) -> None:
        for stream in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        self._process.wait()


def _export(git: Git, mirror: str, commit: str, target: Path) -> None:
    listing = _list(git, mirror, commit)
    temporary = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    objects = _Objects(git, mirror)
    try:
        contents: dict[str, bytes] = {}
        for path, (obj, size) in listing.files.items():
            data = objects.read(obj, size)
            if data is not None:
                contents[path] = data
        for path, obj in listing.links.items():
            raw = objects.read(obj, MAX_LINK_TARGET_BYTES)
            pointed = raw.decode("utf-8", "replace") if raw is not None else ""
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), pointed))
            if pointed.startswith("/") or resolved == ".." or resolved.startswith("../"):
                listing.notes.append(f"{path}: a symbolic link out of the repository: left out")
            elif resolved in contents:
                contents[path] = contents[resolved]
            else:
                listing.notes.append(f"{path}: a symbolic link to no workflow file: left out")
        for path, data in contents.items():
            destination = temporary / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
            destination.chmod(
                0o444
            )  # read-only: an editor opening it should not save into the cache
        (temporary / NOTES_FILE).write_text(json.dumps(listing.notes), encoding="utf-8")
        try:
            os.rename(temporary, target)
        except OSError:
            if not target.is_dir():  # another process wrote the same commit first: that one serves
                raise
    finally:
        objects.close()
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
