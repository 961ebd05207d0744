"""WorkRail language server: a thin adapter from LSP (pygls) to workrail_engine."""

from typing import Any

from workrail_engine import __version__

__all__ = ["WorkrailLanguageServer", "__version__", "create_language_server"]


def __getattr__(name: str) -> Any:
    # pygls is imported only when the server is wanted, so the feature modules stay cheap to test.
    if name in ("WorkrailLanguageServer", "create_language_server"):
        from . import server

        return getattr(server, name)
    raise AttributeError(name)
