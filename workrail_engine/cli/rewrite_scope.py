"""Which files `workrail validate --fix` and `workrail format` may write: those whose resolved path
(every symlink followed) lies inside the project directory or inside a path named on the command
line (a PATH argument, a `--workflows` directory).

Everything else they may still read and check: the configuration's ``workflow-dirs`` (a cloned
repository's `pyproject.toml` can name ``~/.config/app`` or ``../victim``) and a symlink in
``workflows/`` that leads out of the project. Naming such a path on the command line is the user
choosing it, so it counts as named even when it is itself a symlink.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from workrail_engine.cli.formatters.codeframe import printable_path

__all__ = ["RewriteScope"]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class RewriteScope:
    """The project directory and the paths named on the command line, each resolved."""

    def __init__(self, project: Path, named: Iterable[str | os.PathLike[str]] = ()) -> None:
        self._project = os.path.realpath(project)
        self._roots = [self._project, *(os.path.realpath(path) for path in named)]

    def refusal(self, path: str) -> str | None:
        """None when ``path`` may be written; else why not, for the author."""
        resolved = os.path.realpath(path)
        if any(_inside(resolved, root) for root in self._roots):
            return None
        return (
            f"it resolves to {printable_path(resolved)}, outside the project"
            f" ({printable_path(self._project)}) and the paths named on the command line;"
            " name it there to rewrite it"
        )
