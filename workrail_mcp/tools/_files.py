"""Writing a workflow file: inside its directory only, atomically, never half-written."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from workrail_engine.errors import InvalidParams, SecurityViolation, StorageError

__all__ = ["existing_workflow_file", "target_path", "write_atomically"]

_SUFFIXES = (".json", ".yaml", ".yml")


def _process_umask() -> int:
    """The umask, read without changing it where Linux allows (``/proc/self/status``).

    Elsewhere it can only be read by setting it and back, which would race with other threads
    creating files; this runs once, at import, while the server is still starting.
    """
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status", encoding="ascii") as status:
            return int(next(line for line in status if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp creates 0600 files; a workflow file gets what open() would give it (0644 under 022).
_FILE_MODE = 0o666 & ~_process_umask()


def target_path(directory: Path, name: str, *, inside: Path | None = None) -> Path:
    """``directory/name.json``, refusing anything that would land elsewhere.

    The name pattern already excludes separators and leading or repeated dots (a namespaced id
    has one dot between two names: `wr.discovery`); this is the second lock, and it also
    catches a symlink planted at the target that points out of the directory. With ``inside``
    (the project), the directory itself must resolve inside it: a cloned repository whose
    ``workflows`` is a symlink to ``~/.config/…`` must not let an agent write there, while a
    ``workflows`` that links to another folder of the same project is fine.
    """
    root = directory.resolve()
    if inside is not None and not root.is_relative_to(inside.resolve()):
        raise SecurityViolation(
            f"Refusing to write: {directory} leads to {root}, outside the project {inside}",
            name=name,
            directory=str(directory),
        )
    target = root / f"{name}.json"
    if target.parent != root or (target.is_symlink() and target.resolve().parent != root):
        raise SecurityViolation(f"Refusing to write outside {root}", name=name)
    return target


def existing_workflow_file(directory: Path, name: str) -> Path | None:
    for suffix in _SUFFIXES:
        candidate = directory / f"{name}{suffix}"
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return None


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomically(target: Path, text: str, *, overwrite: bool) -> None:
    """Temp file in the same directory, fsync, then rename (or link, to never clobber)."""
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(dir=directory, prefix=f".{target.stem}.", suffix=".tmp")
    except OSError as error:
        raise StorageError(
            f"Cannot write to {directory}: {error.strerror}", directory=str(directory)
        ) from None
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), _FILE_MODE)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(temp, target)
        else:
            # link() fails if the target appeared meanwhile: no race can clobber a file.
            os.link(temp, target)
        _fsync_directory(directory)
    except FileExistsError:
        raise InvalidParams(
            f"Workflow file {target.name} already exists; pass overwrite=true to replace it",
            workflow_path=str(target),
        ) from None
    except OSError as error:
        raise StorageError(
            f"Cannot write {target}: {error.strerror}", workflow_path=str(target)
        ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
