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

    def catalog(self) -> Catalog:
        from workrail_engine.catalog import Catalog

        return Catalog.default(self.project, list(self.workflow_dirs))
