"""WorkRail's workflow engine: documents, diagnostics, the catalog, conditions, rules and runs.

No protocol lives here; the MCP server, the language server and the CLI are adapters over it.
"""

__version__ = "0.1.0"
