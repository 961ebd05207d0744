"""Global options shared by every command: the project directory and extra workflow directories."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workrail_engine.catalog import Catalog

__all__ = ["Settings"]


@dataclass(frozen=True, slots=True)
class Settings:
    """``--project DIR`` (default: the working directory) and ``--workflows DIR`` (repeatable)."""

    project: Path = field(default_factory=Path)
    workflow_dirs: tuple[Path, ...] = ()

    def arguments(self) -> list[str]:
        """These settings as options again (for a command printed to be run next)."""
        project = ["--project", str(self.project)] if self.project != Path() else []
        return project + [arg for d in self.workflow_dirs for arg in ("--workflows", str(d))]

    def catalog(self) -> Catalog:
        from workrail_engine.catalog import Catalog

        return Catalog.default(self.project, list(self.workflow_dirs))
