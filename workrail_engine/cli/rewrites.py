"""Rewriting files in place for `workrail validate --fix` and `workrail format`: the text read the
bounded way, written back atomically, or shown as a unified diff instead; standard input too.

A file is replaced by writing a temporary file next to it and renaming it over the original, so an
interrupted run leaves the old file or the new one, never half of one; the new file keeps the old
one's permission bits, and a symlink keeps pointing at the file it named.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

__all__ = ["STDIN", "Rewrite", "read_source", "read_stdin", "unified_diff", "write_atomically"]

STDIN = "-"


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A file's text before and after (equal when nothing changes); ``new`` is None when the
    file could not be rewritten (it does not parse, or cannot be read)."""

    path: str
    old: str
    new: str | None

    @property
    def changed(self) -> bool:
        return self.new is not None and self.new != self.old


def read_source(path: str) -> str | None:
    """A file's text, or None when it cannot be read as UTF-8 text (validate reports why)."""
    from workrail_engine.text.regular_files import UnreadableFile, read_regular_file

    try:
        return read_regular_file(path).decode("utf-8")
    except (UnreadableFile, UnicodeDecodeError):
        return None


def read_stdin() -> str:
    """Standard input's text, read as a workflow file is: at most the document size limit (then
    one byte more, never the rest), UTF-8; raises ``UnreadableText`` (a WR003 or WR004) else."""
    from workrail_engine.text.document import read_workflow_text

    return read_workflow_text(sys.stdin.buffer)


def write_atomically(path: str, text: str) -> None:
    path = os.path.realpath(path)  # through a symlink to its file, never replacing the link
    directory = os.path.dirname(path)
    mode = os.stat(path).st_mode & 0o7777
    import tempfile  # here, not at start: `workrail validate` without --fix never writes

    fd, temporary = tempfile.mkstemp(prefix=".workrail-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


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
