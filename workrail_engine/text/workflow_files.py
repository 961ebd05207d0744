"""Which files are WorkRail workflows: one rule for every front end.

A JSON or YAML file is a workflow when

- it lies under a ``workflows/`` directory (so ``.workrail/workflows/`` too), except GitHub
  Actions' own ``.github/workflows/``;
- its name ends in ``.workflow.json``, ``.workflow.yaml`` or ``.workflow.yml``; or
- its top-level ``$schema`` names the WorkRail schema (:data:`~workrail_engine.schema.SCHEMA_ID`,
  or a local copy whose name ends in ``workflow.schema.json``).

The path part is what the pre-commit hook's ``files:`` pattern and the language server's default
globs say; the ``$schema`` part is decided from the first few KB of the text, so walking a large
tree never parses a file only to learn that it is someone else's ``package.json``.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePath

from ..schema import SCHEMA_ID
from . import regular_files

__all__ = [
    "HEAD_SIZE",
    "SUFFIXES",
    "is_workflow_file",
    "is_workflow_name",
    "is_workflow_path",
    "is_workflows_directory",
    "lies_in_workflows_directory",
    "names_workrail_schema",
    "read_head",
]

SUFFIXES = (".json", ".yaml", ".yml")
_WORKFLOW_SUFFIXES = tuple(".workflow" + suffix for suffix in SUFFIXES)
HEAD_SIZE = 4096
"""How much of a file's text is read to find its ``$schema``."""

# `"$schema": "…"` in JSON; `$schema: …` (quoted or not) in YAML.
_SCHEMA_KEY = re.compile(r"""["']?\$schema["']?\s*:\s*["']?([^"'\s,}]+)""")


def is_workflows_directory(path: str | os.PathLike[str]) -> bool:
    """A directory named ``workflows`` other than ``.github/workflows``."""
    parts = PurePath(path).parts
    return bool(parts) and parts[-1] == "workflows" and parts[-2:-1] != (".github",)


def is_workflow_path(path: str | os.PathLike[str]) -> bool:
    """Whether the path alone makes a JSON/YAML file a workflow (see the module's docstring)."""
    pure = PurePath(path)
    name = pure.name  # case matters, as in the hook's pattern and the language server's globs
    return name.endswith(SUFFIXES) and is_workflow_name(
        name, lies_in_workflows_directory(pure.parent)
    )


def is_workflow_name(name: str, in_workflows_directory: bool) -> bool:
    """`is_workflow_path` for a file called ``name`` in a directory that
    `lies_in_workflows_directory` or not: a directory walk asks that once for all its files."""
    return name.endswith(SUFFIXES) and (in_workflows_directory or name.endswith(_WORKFLOW_SUFFIXES))


def lies_in_workflows_directory(directory: str | os.PathLike[str]) -> bool:
    """Whether the directory, as spelled, is a `workflows` directory or lies in one."""
    parts = PurePath(directory).parts
    return any(
        part == "workflows" and parts[index - 1 : index] != (".github",)
        for index, part in enumerate(parts)
    )


def names_workrail_schema(text: str) -> bool:
    """Whether the start of ``text`` declares the WorkRail schema as its ``$schema``."""
    match = _SCHEMA_KEY.search(text[:HEAD_SIZE])
    if match is None:
        return False
    value = match.group(1)
    return value == SCHEMA_ID or value.endswith("workflow.schema.json")


def read_head(path: str | os.PathLike[str], size: int = HEAD_SIZE) -> str:
    """The first ``size`` bytes of a file as text ("" when it is not a readable regular file:
    a FIFO named ``x.json`` must not block a directory walk)."""
    return regular_files.read_head(path, size).decode("utf-8", errors="replace")


def is_workflow_file(path: str | os.PathLike[str]) -> bool:
    """The whole rule: by path first, else by peeking at the ``$schema`` of a JSON/YAML file."""
    if is_workflow_path(path):
        return True
    return os.fspath(path).endswith(SUFFIXES) and names_workrail_schema(read_head(path))
