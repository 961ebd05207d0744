"""The client's roots as the project directories (stdio only: one client owns the catalog).

A client that declares the ``roots`` capability is asked for them once initialized and again
when it says they changed; each ``file://`` root becomes a project directory of the catalog
(its ``workflows/`` and ``.workrail/workflows/``), replacing the working directory.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from workrail_engine.catalog import CatalogProtocol

__all__ = ["ClientRoots", "root_directories"]

logger = logging.getLogger(__name__)


def root_directories(uris: list[str]) -> list[Path]:
    directories = []
    for uri in uris:
        parsed = urlparse(uri)
        if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
            directories.append(Path(unquote(parsed.path)))
    return directories


class ClientRoots:
    def __init__(self, catalog: CatalogProtocol) -> None:
        self.catalog = catalog

    async def adopt(self, session: Any) -> None:
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return
        try:
            listed = await session.list_roots()
        except Exception:  # the client may refuse or be gone; the working directory stays
            logger.warning("could not read the client's roots", exc_info=True)
            return
        directories = root_directories([str(root.uri) for root in listed.roots])
        if directories:
            self.catalog.set_project_dirs(directories)
