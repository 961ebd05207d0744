"""Rewriting files in place for `workrail validate --fix` and `workrail format`: the text read the
bounded way, written back atomically, or shown as a unified diff instead; standard input too.

A file is replaced by writing a temporary file next to it and renaming it over the original, so an
interrupted run leaves the old file or the new one, never half of one; the new file keeps the old
one's permission bits, and a symlink keeps pointing at the file it named. Before the rename the
file must still be the one read (device, inode, size, modification time): an edit saved while the
run worked is never overwritten with the old text reformatted. Only files inside the
:class:`~workrail_engine.cli.rewrite_scope.RewriteScope` are written.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workrail_engine.cli.formatters.codeframe import printable_path
from workrail_engine.cli.rewrite_scope import RewriteScope

__all__ = [
    "STALE_TEMPORARY_SECONDS",
    "FileIdentity",
    "STDIN",
    "Rewrite",
    "Source",
    "read_source",
    "read_stdin",
    "unified_diff",
    "write_atomically",
    "write_rewrites",
]

STDIN = "-"
TEMPORARY_PREFIX = ".workrail-"
TEMPORARY_SUFFIX = ".tmp"
# A temporary file left by a run that was killed between writing it and renaming it is removed by
# the next run that writes in its directory: at once when the pid in its name is no live process
# here, else once it is this old. A live run renames its file within milliseconds, so an hour-old
# one is left over whoever wrote it (another machine sharing the directory, a reused pid).
STALE_TEMPORARY_SECONDS = 3600

FileIdentity = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns


class ChangedSinceRead(Exception):
    """The file on disk is no longer the one read: someone saved it meanwhile."""


@dataclass(frozen=True, slots=True)
class Source:
    """A file's text and the identity of the file it was read from."""

    text: str
    identity: FileIdentity


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A file's text before and after (equal when nothing changes); ``new`` is None when the
    file is left as it is, ``refusal`` saying why (empty: it cannot be read, validate says why)."""

    path: str
    old: str
    new: str | None
    identity: FileIdentity | None = None
    refusal: str = ""

    @property
    def changed(self) -> bool:
        return self.new is not None and self.new != self.old


def _identity(status: os.stat_result) -> FileIdentity:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def read_source(path: str) -> Source | None:
    """A file's text, or None when it cannot be read as UTF-8 text (validate reports why)."""
    from workrail_engine.text.regular_files import UnreadableFile, read_regular_file

    try:
        # Taken before reading: a save during the read changes it, and the write checks it.
        identity = _identity(os.stat(path))
        return Source(read_regular_file(path).decode("utf-8"), identity)
    except (OSError, UnreadableFile, UnicodeDecodeError):
        return None


def read_stdin() -> str:
    """Standard input's text, read as a workflow file is: at most the document size limit (then
    one byte more, never the rest), UTF-8; raises ``UnreadableText`` (a WR003 or WR004) else."""
    from workrail_engine.text.document import read_workflow_text

    return read_workflow_text(sys.stdin.buffer)


def write_atomically(path: str, text: str, identity: FileIdentity | None = None) -> None:
    """Replace the file ``path`` resolves to with ``text``; raises :class:`ChangedSinceRead`
    (writing nothing) when ``identity`` is given and the file is no longer that one."""
    path = os.path.realpath(path)  # through a symlink to its file, never replacing the link
    directory = os.path.dirname(path)
    mode = os.stat(path).st_mode & 0o7777
    import tempfile  # here, not at start: `workrail validate` without --fix never writes

    # The pid in the name tells the next run whether the writer still lives.
    fd, temporary = tempfile.mkstemp(
        prefix=f"{TEMPORARY_PREFIX}{os.getpid()}-", suffix=TEMPORARY_SUFFIX, dir=directory
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        if identity is not None and _identity(os.stat(path)) != identity:
            raise ChangedSinceRead(path)
        os.replace(temporary, path)
        temporary = ""
    finally:
        if temporary:  # every way out but the rename: an error, an interrupt
            os.unlink(temporary)


def remove_stale_temporaries(directory: str) -> None:
    """Remove the temporary files killed runs left in ``directory`` (see STALE_TEMPORARY_SECONDS)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        name = entry.name
        if not (name.startswith(TEMPORARY_PREFIX) and name.endswith(TEMPORARY_SUFFIX)):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMPORARY_SECONDS
            if old or not _writer_lives(name):
                os.unlink(entry.path)
        except OSError:
            continue  # gone meanwhile, or not ours to remove: the next run tries again


def _writer_lives(name: str) -> bool:
    """Whether the process named in ``.workrail-<pid>-….tmp`` runs; True when no pid is named
    (such a file is removed by age only)."""
    pid = name[len(TEMPORARY_PREFIX) :].split("-", 1)[0]
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def write_rewrites(
    rewrites: Sequence[Rewrite], scope: RewriteScope, report: Callable[[str], None], doing: str
) -> list[Rewrite]:
    """Write each changed rewrite that ``scope`` allows and that nobody changed since it was read;
    ``report`` a line for each one left as it is (``doing``: "formatting", "fixing"), and return
    those. The temporary files killed runs left in the directories in scope are removed first.
    """
    in_scope = [r.path for r in rewrites if scope.refusal(r.path) is None]
    for directory in sorted({os.path.dirname(os.path.realpath(path)) for path in in_scope}):
        remove_stale_temporaries(directory)
    left: list[Rewrite] = []
    for rewrite in rewrites:
        if not rewrite.changed:
            continue
        assert rewrite.new is not None
        why = scope.refusal(rewrite.path)
        if why is None:
            try:
                write_atomically(rewrite.path, rewrite.new, rewrite.identity)
                continue
            except ChangedSinceRead:
                why = f"it changed while {doing}; run again"
        report(f"{printable_path(rewrite.path)}: not rewritten: {why}")
        left.append(rewrite)
    return left


def unified_diff(rewrite: Rewrite) -> str:
    """``--- path`` / ``+++ path`` and the hunks, as ``ruff --diff`` prints them."""
    if not rewrite.changed:
        return ""
    assert rewrite.new is not None
    import difflib  # here, not at start: only --diff shows one

    lines = difflib.unified_diff(
        rewrite.old.splitlines(keepends=True),
        rewrite.new.splitlines(keepends=True),
        fromfile=rewrite.path,
        tofile=rewrite.path,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
