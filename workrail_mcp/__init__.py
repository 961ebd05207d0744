"""WorkRail MCP server: a thin adapter from the Model Context Protocol to workrail_engine.

`create_server(catalog)` builds the server; `workrail-mcp` (``workrail_mcp.__main__:main``)
serves it over stdio or Streamable HTTP.
"""

from workrail_mcp.server import SERVER_NAME, SERVER_TITLE, create_server

__all__ = ["SERVER_NAME", "SERVER_TITLE", "create_server"]
