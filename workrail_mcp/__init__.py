"""WorkRail MCP server: a thin adapter from the Model Context Protocol to workrail_engine.

`create_server(catalog)` builds the server; `workrail-mcp` (``workrail_mcp.__main__:main``)
serves it over stdio or Streamable HTTP.

The names below load `workrail_mcp.server` (and with it the MCP SDK, most of a second of import)
on first use, so that `workrail-mcp --help` and a usage error answer without the SDK.
"""

from typing import TYPE_CHECKING

from workrail_engine.lazy_names import names_loaded_on_first_use

if TYPE_CHECKING:
    from workrail_mcp.server import SERVER_NAME, SERVER_TITLE, create_server

__all__ = ["SERVER_NAME", "SERVER_TITLE", "create_server"]

__getattr__ = names_loaded_on_first_use(__name__, dict.fromkeys(__all__, "server"))
