"""Where a workflow's ``references`` point, looked up once when a session starts.

A workflow declares the documents an agent should read beside its steps (``references``: id,
title, source, purpose, authoritative, resolveFrom). A session's start looks each one up —
``resolveFrom: workspace`` (the default) in the session's workspace, ``package`` in the folder
that ships the workflow (the parent of its source folder, so that upstream's repository served
with ``--workflows <repo>/workflows`` finds its ``spec/`` files, as upstream finds them in its
package) — and the session keeps the result: a re-read says what the start said, without looking
again. A reference is ``resolved``, with its absolute ``resolvedPath``, only when its source names
a regular file inside its base, symbolic links followed; else ``unresolved``. Nothing is read:
the agent opens the document itself, and a workflow learns nothing of files outside the base.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MAX_REFERENCES_LOOKED_UP", "resolve_references"]

# References looked up at a start; the later ones of a longer list are unresolved without a
# look-up (a workflow cannot make a start stat the disk without bound).
MAX_REFERENCES_LOOKED_UP = 100
_DECLARED = ("id", "title", "source", "purpose", "authoritative")


def resolve_references(
    definition: Mapping[str, Any], workspace: str | None, package: Path | None
) -> list[dict[str, Any]]:
    """The workflow's references in declared order, each as declared (``resolveFrom`` filled in)
    with ``status`` resolved | unresolved and, when resolved, ``resolvedPath``."""
    declared = definition.get("references")
    found: list[dict[str, Any]] = []
    for index, ref in enumerate(declared if isinstance(declared, list) else []):
        if not isinstance(ref, Mapping):
            continue
        where = "package" if ref.get("resolveFrom") == "package" else "workspace"
        if where == "workspace":
            base = workspace
        else:
            base = str(package) if package is not None else None
        path = _file_inside(base, ref.get("source")) if index < MAX_REFERENCES_LOOKED_UP else None
        entry = {key: ref[key] for key in _DECLARED if key in ref}
        entry["resolveFrom"] = where
        entry["status"] = "unresolved" if path is None else "resolved"
        if path is not None:
            entry["resolvedPath"] = path
        found.append(entry)
    return found


def _file_inside(base: str | None, source: Any) -> str | None:
    """``source`` under ``base`` when it is a regular file there (the path as named, and where
    its links lead, both inside ``base``), else None."""
    if base is None or not isinstance(source, str) or not source:
        return None
    root = os.path.normpath(base)
    named = os.path.normpath(os.path.join(root, source))
    try:
        if not _inside(named, root) or not _inside(os.path.realpath(named), os.path.realpath(root)):
            return None
        return named if stat.S_ISREG(os.stat(named).st_mode) else None
    except (OSError, ValueError):  # a missing file, a name the system refuses (NUL, too long)
        return None


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root
